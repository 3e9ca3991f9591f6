#!/usr/bin/env python3
"""Checks docs/kubernetes/deniable.yaml without a cluster (CTest kubernetes_manifest).

No Kubernetes OpenAPI schema and no kubeconform/kubeval are available offline (Debian 12 packages
neither), so this checks what can be checked here:

1. Structure: every document against a JSON Schema (python3-jsonschema) written for the subset of
   the Kubernetes API the file uses (Secret, Service, StatefulSet, its pod template, containers,
   probes, resources, securityContext, volumes). The schemas close the objects
   (additionalProperties: false), so a misspelt field (readinesProbe, runAsNonroot) fails, and
   they require what the API server requires (names, selector, serviceName, image, ports).
2. Consistency and policy: the selector matches the template's labels and the Service selects
   the pod; each probe has exactly one handler; named ports exist; every volumeMount names a
   volume or a volumeClaimTemplate; every Secret referenced is defined in the file or created
   by a command in its header; one replica (SQLite: one writer); non-root, read-only root file
   system, no privilege escalation, all capabilities dropped, requests <= limits for each
   container; the database's directory is on the claim; with TLS on, no port is named "http"
   (issue 38: the listener on 8080 serves HTTPS).
3. The image: every container's tag is the server's version (`deniable-server --version`), and
   the header builds that tag and says how it reaches the nodes (a `kind load`, `ctr ... import`
   or registry step): the docs build `:latest` otherwise, and no step got it into a cluster.
4. Behaviour, with the real binaries: the init container's script against a fresh database
   (adds exactly one analyst token, to a 0600 file, and nothing on the second start), then the
   server started with the manifest's TLS flags and the probes' own commands: liveness and
   readiness pass while it serves, both fail once it is gone.

Usage: manifest_test.py MANIFEST SERVER_BINARY CLI_BINARY
"""
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import jsonschema
import yaml
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402

QUANTITY = {"type": ["string", "integer"],
            "pattern": r"^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?$"}
NAME = {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}
LABELS = {"type": "object", "additionalProperties": {"type": "string"}}
METADATA = {"type": "object", "required": ["name"], "additionalProperties": False,
            "properties": {"name": NAME, "namespace": NAME, "labels": LABELS,
                           "annotations": LABELS}}


def closed(properties, required=()):
    return {"type": "object", "additionalProperties": False, "required": list(required),
            "properties": properties}


PORT_REF = {"type": ["integer", "string"]}
PROBE = closed({
    "exec": closed({"command": {"type": "array", "minItems": 1, "items": {"type": "string"}}},
                   ["command"]),
    "grpc": closed({"port": {"type": "integer"}, "service": {"type": "string"}}, ["port"]),
    "httpGet": closed({"path": {"type": "string"}, "port": PORT_REF,
                       "scheme": {"enum": ["HTTP", "HTTPS"]}}, ["port"]),
    "tcpSocket": closed({"port": PORT_REF}, ["port"]),
    **{k: {"type": "integer", "minimum": 0} for k in (
        "initialDelaySeconds", "periodSeconds", "timeoutSeconds", "failureThreshold",
        "successThreshold", "terminationGracePeriodSeconds")},
})
RESOURCES = closed({"requests": closed({"cpu": QUANTITY, "memory": QUANTITY}),
                    "limits": closed({"cpu": QUANTITY, "memory": QUANTITY})},
                   ["requests", "limits"])
CONTAINER_SECURITY = closed({
    "allowPrivilegeEscalation": {"type": "boolean"}, "readOnlyRootFilesystem": {"type": "boolean"},
    "runAsNonRoot": {"type": "boolean"}, "runAsUser": {"type": "integer"},
    "runAsGroup": {"type": "integer"}, "privileged": {"type": "boolean"},
    "capabilities": closed({"drop": {"type": "array", "items": {"type": "string"}},
                            "add": {"type": "array", "items": {"type": "string"}}}),
    "seccompProfile": closed({"type": {"enum": ["RuntimeDefault", "Localhost", "Unconfined"]}},
                             ["type"]),
})
ENV = closed({"name": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
              "value": {"type": "string"},
              "valueFrom": closed({"secretKeyRef": closed({
                  "name": NAME, "key": {"type": "string"}, "optional": {"type": "boolean"}},
                  ["name", "key"])})}, ["name"])
CONTAINER = closed({
    "name": NAME, "image": {"type": "string", "minLength": 1},
    "imagePullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
    "command": {"type": "array", "items": {"type": "string"}},
    "args": {"type": "array", "items": {"type": "string"}},
    "env": {"type": "array", "items": ENV},
    "ports": {"type": "array", "items": closed({
        "name": {"type": "string", "maxLength": 15}, "containerPort": {"type": "integer"},
        "protocol": {"enum": ["TCP", "UDP", "SCTP"]}}, ["containerPort"])},
    "startupProbe": PROBE, "livenessProbe": PROBE, "readinessProbe": PROBE,
    "resources": RESOURCES, "securityContext": CONTAINER_SECURITY,
    "volumeMounts": {"type": "array", "items": closed({
        "name": NAME, "mountPath": {"type": "string", "pattern": "^/"},
        "readOnly": {"type": "boolean"}, "subPath": {"type": "string"}},
        ["name", "mountPath"])},
}, ["name", "image", "resources", "securityContext"])
VOLUME = closed({
    "name": NAME,
    "secret": closed({"secretName": NAME, "defaultMode": {"type": "integer"},
                      "optional": {"type": "boolean"}}, ["secretName"]),
    "emptyDir": closed({"medium": {"type": "string"}, "sizeLimit": QUANTITY}),
}, ["name"])
POD_SPEC = closed({
    "automountServiceAccountToken": {"type": "boolean"},
    "terminationGracePeriodSeconds": {"type": "integer", "minimum": 0},
    "securityContext": closed({
        "runAsNonRoot": {"type": "boolean"}, "runAsUser": {"type": "integer"},
        "runAsGroup": {"type": "integer"}, "fsGroup": {"type": "integer"},
        "seccompProfile": closed({"type": {"enum": ["RuntimeDefault", "Localhost"]}},
                                 ["type"])}),
    "initContainers": {"type": "array", "items": CONTAINER},
    "containers": {"type": "array", "minItems": 1, "items": CONTAINER},
    "volumes": {"type": "array", "items": VOLUME},
}, ["containers"])
SCHEMAS = {
    ("v1", "Secret"): closed({
        "apiVersion": {"const": "v1"}, "kind": {"const": "Secret"}, "metadata": METADATA,
        "type": {"type": "string"}, "stringData": LABELS, "data": LABELS},
        ["apiVersion", "kind", "metadata"]),
    ("v1", "Service"): closed({
        "apiVersion": {"const": "v1"}, "kind": {"const": "Service"}, "metadata": METADATA,
        "spec": closed({
            "type": {"enum": ["ClusterIP", "NodePort", "LoadBalancer"]}, "selector": LABELS,
            "clusterIP": {"type": "string"},
            "ports": {"type": "array", "minItems": 1, "items": closed({
                "name": NAME, "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                "targetPort": PORT_REF, "protocol": {"enum": ["TCP", "UDP", "SCTP"]},
                "appProtocol": {"type": "string"}}, ["port"])}},
            ["selector", "ports"])},
        ["apiVersion", "kind", "metadata", "spec"]),
    ("apps/v1", "StatefulSet"): closed({
        "apiVersion": {"const": "apps/v1"}, "kind": {"const": "StatefulSet"},
        "metadata": METADATA,
        "spec": closed({
            "replicas": {"type": "integer", "minimum": 0}, "serviceName": NAME,
            "selector": closed({"matchLabels": LABELS}, ["matchLabels"]),
            "updateStrategy": closed({"type": {"enum": ["RollingUpdate", "OnDelete"]}}),
            "template": closed({"metadata": closed({"labels": LABELS,
                                                    "annotations": LABELS}, ["labels"]),
                                "spec": POD_SPEC}, ["metadata", "spec"]),
            "volumeClaimTemplates": {"type": "array", "items": closed({
                "metadata": closed({"name": NAME}, ["name"]),
                "spec": closed({
                    "accessModes": {"type": "array", "minItems": 1, "items": {
                        "enum": ["ReadWriteOnce", "ReadWriteOncePod", "ReadOnlyMany",
                                 "ReadWriteMany"]}},
                    "storageClassName": {"type": "string"},
                    "resources": closed({"requests": closed({"storage": QUANTITY},
                                                            ["storage"])}, ["requests"])},
                    ["accessModes", "resources"])}, ["metadata", "spec"])}},
            ["selector", "serviceName", "template"])},
        ["apiVersion", "kind", "metadata", "spec"]),
}


def quantity(q):
    """A CPU or memory quantity as a float (cores or bytes)."""
    m = re.fullmatch(r"([0-9.]+)(m|k|Ki|Mi|Gi|Ti|M|G|T)?", str(q))
    scale = {None: 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10,
             "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}[m.group(2)]
    return float(m.group(1)) * scale


def check_structure(docs):
    for doc in docs:
        key = (doc.get("apiVersion"), doc.get("kind"))
        check(key in SCHEMAS, f"unexpected kind {key} (the schema covers {sorted(SCHEMAS)})")
        try:
            jsonschema.validate(doc, SCHEMAS[key])
        except jsonschema.ValidationError as e:
            raise AssertionError(f"{key[1]} {doc['metadata'].get('name')}: "
                                 f"{'/'.join(map(str, e.absolute_path))}: {e.message}") from None


def check_consistency(docs, header):
    by_kind = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], []).append(doc)
    (sts,) = by_kind["StatefulSet"]
    (service,) = by_kind["Service"]
    spec = sts["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    check(spec["replicas"] == 1, "SQLite has one writer: replicas must be 1")
    check(spec["serviceName"] == service["metadata"]["name"])
    for selector in (spec["selector"]["matchLabels"], service["spec"]["selector"]):
        check(all(labels.get(k) == v for k, v in selector.items()), \
            f"selector {selector} does not match the pod labels {labels}")
    check(pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] != 0)
    check(pod["automountServiceAccountToken"] is False)
    volumes = {v["name"] for v in pod.get("volumes", [])}
    claims = {c["metadata"]["name"] for c in spec.get("volumeClaimTemplates", [])}
    secrets_defined = {d["metadata"]["name"] for d in by_kind.get("Secret", [])}
    secrets_created = set(re.findall(r"create secret \w+ ([a-z0-9-]+)", header))
    secrets_used = {v["secret"]["secretName"] for v in pod.get("volumes", []) if "secret" in v}
    main = None
    for c in pod.get("initContainers", []) + pod["containers"]:
        where = f"container {c['name']}"
        sc = c["securityContext"]
        check(sc["allowPrivilegeEscalation"] is False, where)
        check(sc["readOnlyRootFilesystem"] is True, where)
        check(sc["capabilities"]["drop"] == ["ALL"], where)
        for k in ("cpu", "memory"):
            check(quantity(c["resources"]["requests"][k]) <= \
                quantity(c["resources"]["limits"][k]), f"{where}: {k} request above its limit")
        for m in c.get("volumeMounts", []):
            check(m["name"] in volumes | claims, f"{where}: mount of unknown volume {m['name']}")
        for e in c.get("env", []):
            ref = e.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                secrets_used.add(ref["name"])
        if c in pod["containers"]:
            main = c
    for name in secrets_used:
        check(name in secrets_defined | secrets_created, \
            f"Secret {name} is neither in the file nor created by a command in its header")
    ports = {p["name"]: p["containerPort"] for p in main["ports"]}
    for p in service["spec"]["ports"]:
        check(p["targetPort"] in ports or p["targetPort"] in ports.values(), p)
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = main[kind]
        handlers = [h for h in ("exec", "grpc", "httpGet", "tcpSocket") if h in probe]
        check(len(handlers) == 1, f"{kind}: exactly one handler, got {handlers}")
    db_flag = next(a for a in main["args"] if a.startswith("--db="))
    db_dir = os.path.dirname(db_flag.split("=", 1)[1])
    data_mounts = [m for m in main["volumeMounts"] if m["name"] in claims]
    check(any(m["mountPath"] == db_dir for m in data_mounts), \
        f"the database directory {db_dir} is not on the volume claim")
    writable = {m["mountPath"] for m in main["volumeMounts"] if not m.get("readOnly")}
    check("/tmp" in writable, "read-only root file system: /tmp needs its own volume")
    if any(a.startswith("--tls_cert_file=") for a in main["args"]):
        for p in main["ports"] + service["spec"]["ports"]:
            check(p["name"] != "http", f"port {p['name']} serves HTTPS (TLS is on): name it https")
    return sts


def check_image(docs, header, server_bin):
    version = subprocess.run([server_bin, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[1]
    image = f"deniable-server:{version}"
    (sts,) = [d for d in docs if d["kind"] == "StatefulSet"]
    pod = sts["spec"]["template"]["spec"]
    for c in pod.get("initContainers", []) + pod["containers"]:
        check(c["image"] == image, f"container {c['name']}: image {c['image']}, want {image}")
    check(f"docker/build.sh -t {image}" in header, f"the header does not build {image}")
    check(re.search(rf"kind load docker-image {re.escape(image)}", header) and
          re.search(rf"docker save {re.escape(image)} \| .*ctr .*import", header),
          "the header has no step that gets the image into a cluster (kind load, ctr import)")
    return image


def probe_argv(probe, port, tls_dir):
    argv = [a.replace("localhost:50051", f"localhost:{port}") for a in probe["exec"]["command"]]
    return [a.replace("/etc/deniable/tls", tls_dir) for a in argv]


def run_probe(probe, port, env, tls_dir):
    return subprocess.run(probe_argv(probe, port, tls_dir), env=env, capture_output=True,
                          text=True, timeout=30).returncode


def check_behaviour(sts, secrets, server_bin, cli_bin):
    work = tempfile.mkdtemp(prefix="deniable_k8s_")
    bindir, data, tls = (os.path.join(work, d) for d in ("bin", "data", "tls"))
    for d in (bindir, data, tls):
        os.mkdir(d)
    os.symlink(os.path.abspath(server_bin), os.path.join(bindir, "deniable-server"))
    os.symlink(os.path.abspath(cli_bin), os.path.join(bindir, "deniable"))
    pod = sts["spec"]["template"]["spec"]
    main = pod["containers"][0]
    server_name = next(a for a in main["readinessProbe"]["exec"]["command"]
                       if a.startswith("--tls_server_name=")).split("=", 1)[1]
    subprocess.run(
        ["sh", "-ec", f"""
        openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca \
          -keyout ca.key -out ca.crt
        openssl req -newkey rsa:2048 -nodes -subj /CN={server_name} -keyout tls.key -out s.csr
        printf 'subjectAltName=DNS:{server_name}\\n' > san.ext
        openssl x509 -req -in s.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
          -extfile san.ext -out tls.crt"""], cwd=tls, check=True, capture_output=True)
    env = {"PATH": bindir + ":/usr/bin:/bin", "HOME": work}
    for e in main["env"]:
        if "value" in e:
            env[e["name"]] = e["value"].replace("/etc/deniable/tls", tls)
        else:  # a key of a Secret in the file, as the kubelet would set it
            ref = e["valueFrom"]["secretKeyRef"]
            env[e["name"]] = secrets.get(ref["name"], {}).get(ref["key"], "")

    # The init container, twice: one token on the first start, none on the second.
    (init,) = pod["initContainers"]
    script = init["args"][0].replace("/var/lib/deniable", data)
    for _ in range(2):
        subprocess.run(init["command"] + [script], env=env, check=True, timeout=60)
    token_file = os.path.join(data, "bootstrap-analyst-token")
    token = open(token_file).read().strip()
    check(re.fullmatch(r"dn_[A-Za-z0-9_-]{40,}", token), "the token file holds no token")
    check(stat.S_IMODE(os.stat(token_file).st_mode) == 0o600)
    listed = subprocess.run([server_bin, "tokens", "list", f"--db={data}/deniable.db"],
                            capture_output=True, text=True, check=True).stdout
    check(len(listed.strip().splitlines()) == 2 and "analyst" in listed, listed)

    # The server with the manifest's flags (TLS, the token table not empty, no --insecure).
    args = [a.replace("/var/lib/deniable", data).replace("/etc/deniable/tls", tls)
            .replace("0.0.0.0:50051", "127.0.0.1:0").replace("0.0.0.0:8080", "127.0.0.1:0")
            for a in main["args"]]
    log_path = os.path.join(work, "server.log")
    with open(log_path, "w") as log:
        server = subprocess.Popen([server_bin, *args], stdout=log, stderr=subprocess.STDOUT,
                                  env=env)
    port = None
    for _ in range(250):
        m = re.search(r"event=start .* port=(\d+) ", open(log_path).read())
        if m:
            port = m.group(1)
            break
        check(server.poll() is None, "server exited:\n" + open(log_path).read())
        time.sleep(0.02)
    check(port, "server did not start:\n" + open(log_path).read())
    try:
        check("tls=on" in open(log_path).read(), open(log_path).read())
        for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
            rc = run_probe(main[kind], port, env, tls)
            check(rc == 0, f"{kind} failed ({rc}) against a serving collector")
        # An analyst call with the bootstrap token works, and without it is refused.
        ok = subprocess.run([cli_bin, "list-metrics", f"--target=localhost:{port}",
                             f"--tls_server_name={server_name}"],
                            env={**env, "DENIABLE_TOKEN": token}, capture_output=True)
        check(ok.returncode == 0, ok.stderr)
        refused = subprocess.run([cli_bin, "list-metrics", f"--target=localhost:{port}",
                                  f"--tls_server_name={server_name}"], env=env,
                                 capture_output=True)
        check(refused.returncode == 5, (refused.returncode, refused.stderr))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    for kind in ("livenessProbe", "readinessProbe"):
        check(run_probe(main[kind], port, env, tls) != 0, f"{kind} passed with no server")
    shutil.rmtree(work)


def main():
    manifest, server_bin, cli_bin = sys.argv[1:4]
    text = open(manifest).read()
    header = "".join(line for line in text.splitlines(True) if line.startswith("#"))
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    check_structure(docs)
    print(f"structure: {len(docs)} documents valid against the schemas")
    sts = check_consistency(docs, header)
    print("consistency and policy: OK")
    print(f"image: {check_image(docs, header, server_bin)}, built and loaded in the header")
    secrets = {d["metadata"]["name"]: d.get("stringData", {}) for d in docs
               if d["kind"] == "Secret"}
    check_behaviour(sts, secrets, server_bin, cli_bin)
    print("init container, probes and TLS against the real binaries: OK")


if __name__ == "__main__":
    main()
