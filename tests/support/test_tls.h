// A self-signed certificate made at test time with OpenSSL (P-256 key, CN and SAN "localhost",
// valid for a day), so that no key material lives in the repository.
#ifndef DENIABLE_TESTS_SUPPORT_TEST_TLS_H_
#define DENIABLE_TESTS_SUPPORT_TEST_TLS_H_

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <string>

namespace deniable::testing {

struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;
};

inline std::string BioToString(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(size));
  BIO_free(bio);
  return out;
}

// Returns an empty certificate if OpenSSL fails (tests then fail on it).
inline TestCertificate MakeSelfSignedCertificate(const char* common_name = "localhost") {
  TestCertificate out;
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (key == nullptr || cert == nullptr) return out;
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  const std::string san = std::string("DNS:") + common_name;
  for (const auto& [nid, value] :
       {std::pair<int, std::string>{NID_subject_alt_name, san},
        std::pair<int, std::string>{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(cert, key, EVP_sha256());
  BIO* cert_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cert_bio, cert);
  BIO* key_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(key_bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  out.cert_pem = BioToString(cert_bio);
  out.key_pem = BioToString(key_bio);
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace deniable::testing

#endif  // DENIABLE_TESTS_SUPPORT_TEST_TLS_H_
