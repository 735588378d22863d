/* hash.h - the hash of names for the tables a file's or a client's text
 * fills: registered names (names.c), a config's pools by name
 * (host/name_index.c), a YAML mapping's keys and its anchors
 * (host/node.c).
 *
 * Keyed: SipHash-2-4 under a key drawn from the kernel once per process
 * (getrandom). The names come from files any control client can name
 * (`shoalctl diff FILE`); with an unkeyed hash (FNV-1a, as before) a file
 * of keys that all hash alike -- cheap to make for a known function --
 * turned each table's probes into a scan of every key: 32,768 such keys
 * held shoald's thread for 8 s. Nobody outside the process knows the key,
 * so nobody can choose names that collide. The key is the process's one
 * piece of global state: written once, before any hash is taken, read
 * only after (pthread_once orders it).
 */
#ifndef SHOAL_RUNTIME_HASH_H
#define SHOAL_RUNTIME_HASH_H

#include <stddef.h>
#include <stdint.h>

/* SipHash-2-4 of the n bytes at p under key (k0, k1): the reference
 * function, for its test vectors. */
uint64_t shoal__siphash(uint64_t k0, uint64_t k1, const void *p, size_t n);

/* A name's hash under the process's key (a NUL-terminated string). */
uint64_t shoal__name_hash(const char *name);

#endif
