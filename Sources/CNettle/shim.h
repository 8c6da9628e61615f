#ifndef APEX_CNETTLE_SHIM_H
#define APEX_CNETTLE_SHIM_H
// Nettle's PBKDF2, AES key wrap (RFC 3394), AES-CBC and AES-GCM, for reading encrypted iOS backups. The helpers
// below only pass Nettle's own functions to its mode functions (which Swift can't do with their C types) and wipe
// the contexts that held keys; they make no decision.
#include <nettle/aes.h>
#include <nettle/cbc.h>
#include <nettle/gcm.h>
#include <nettle/memops.h>
#include <nettle/nist-keywrap.h>
#include <nettle/pbkdf2.h>
#include <string.h>

static inline void apex_nettle_wipe(void *p, size_t n) {
    volatile unsigned char *v = (volatile unsigned char *)p;
    while (n--) *v++ = 0;
}

/// AES-256-CBC over whole blocks, encrypting or decrypting `src` into `dst` from the 16-byte `iv`.
static inline void apex_aes256_cbc(
    int encrypt, const uint8_t *key, const uint8_t *iv, size_t length, uint8_t *dst, const uint8_t *src) {
    struct aes256_ctx ctx;
    uint8_t chain[AES_BLOCK_SIZE];
    memcpy(chain, iv, AES_BLOCK_SIZE);
    if (encrypt) {
        aes256_set_encrypt_key(&ctx, key);
        cbc_encrypt(&ctx, (nettle_cipher_func *)aes256_encrypt, AES_BLOCK_SIZE, chain, length, dst, src);
    } else {
        aes256_set_decrypt_key(&ctx, key);
        cbc_decrypt(&ctx, (nettle_cipher_func *)aes256_decrypt, AES_BLOCK_SIZE, chain, length, dst, src);
    }
    apex_nettle_wipe(&ctx, sizeof ctx);
    apex_nettle_wipe(chain, sizeof chain);
}

/// RFC 3394's default initial value.
static const uint8_t apex_keywrap_iv[8] = {0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6};

static inline int apex_aes256_key_unwrap(
    const uint8_t *kek, size_t cleartext_length, uint8_t *cleartext, const uint8_t *wrapped) {
    struct aes256_ctx ctx;
    aes256_set_decrypt_key(&ctx, kek);
    int ok = aes256_keyunwrap(&ctx, apex_keywrap_iv, cleartext_length, cleartext, wrapped);
    apex_nettle_wipe(&ctx, sizeof ctx);
    return ok;
}

static inline void apex_aes256_key_wrap(
    const uint8_t *kek, size_t wrapped_length, uint8_t *wrapped, const uint8_t *cleartext) {
    struct aes256_ctx ctx;
    aes256_set_encrypt_key(&ctx, kek);
    aes256_keywrap(&ctx, apex_keywrap_iv, wrapped_length, wrapped, cleartext);
    apex_nettle_wipe(&ctx, sizeof ctx);
}

/// AES-256-GCM with an IV of any length (0 included: J0 = GHASH(0) = 0, as Apple's keychain items use), no AAD
/// when aad_length is 0. Decrypts in place of dst and writes the computed tag.
static inline void apex_aes256_gcm(
    int encrypt, const uint8_t *key, size_t iv_length, const uint8_t *iv, size_t aad_length, const uint8_t *aad,
    size_t length, uint8_t *dst, const uint8_t *src, uint8_t *tag) {
    struct gcm_aes256_ctx ctx;
    gcm_aes256_set_key(&ctx, key);
    gcm_aes256_set_iv(&ctx, iv_length, iv);
    if (aad_length > 0) gcm_aes256_update(&ctx, aad_length, aad);
    if (encrypt) {
        gcm_aes256_encrypt(&ctx, length, dst, src);
    } else {
        gcm_aes256_decrypt(&ctx, length, dst, src);
    }
    gcm_aes256_digest(&ctx, GCM_DIGEST_SIZE, tag);
    apex_nettle_wipe(&ctx, sizeof ctx);
}

/// 1 when the two tags are equal, in time that doesn't depend on where they differ.
static inline int apex_nettle_equal(const uint8_t *a, const uint8_t *b, size_t n) { return memeql_sec(a, b, n); }

#endif
