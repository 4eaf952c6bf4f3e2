#ifndef ENTITLEMENT_CACHE_CLIBCRYPTO_SHIM_H
#define ENTITLEMENT_CACHE_CLIBCRYPTO_SHIM_H

#include <openssl/evp.h>
#include <openssl/sha.h>

#endif
