#ifndef ENTITLEMENT_CACHE_CLIBCRYPTO_SHIM_H
#define ENTITLEMENT_CACHE_CLIBCRYPTO_SHIM_H

// The low-level SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but they
// remain in every 3.x release and compute the same digest, while the first EVP call loads
// openssl.cnf and the default provider: about 1.4 ms, the largest part of a CLI process's
// first decision. This must come before the first OpenSSL header.
#define OPENSSL_SUPPRESS_DEPRECATED

#include <openssl/evp.h>
#include <openssl/sha.h>

#endif
