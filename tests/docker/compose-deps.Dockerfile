# Debian's PostgreSQL 15 and nginx in one image, for the postgres and balancer services of
# docker/compose.postgres.yaml in CI (tests/docker/run_compose_test.sh). Without it those
# services install the packages at first start, one after the other; with it the packages are
# installed once, in parallel with nothing waiting, and cached by Docker between runs.
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 nginx \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*
