#ifndef ENTITLEMENT_CACHE_CLIBCRYPTO_SHIM_H
#define ENTITLEMENT_CACHE_CLIBCRYPTO_SHIM_H

// The low-level SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but the
// EVP path fetches the algorithm from a provider, which on first use initializes the provider
// machinery and reads openssl.cnf: about a third of a whole `entitlement-cache check` process.
// The low-level functions compute the same digest with none of that. Suppressing the
// deprecation marks keeps the Swift build warning-free.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <openssl/sha.h>

// Ed25519 has no low-level API in OpenSSL 3: EVP is the only way in. It is used only where a
// signature is checked (a signed snapshot stored or read from disk, <doc:TrustedSnapshots>), never
// on the hot path.
#include <openssl/evp.h>

#endif
