/* Worker threads kept between calls: pool_run(k, fn, parts, size) runs fn on parts[1..k) in the workers and parts[0]
   on the calling thread, and returns when all are done (nbs/01j_kernels.lstm.ipynb says why). */
#pragma once
#include <pthread.h>
typedef void *(*Job)(void *);
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER, pool_busy = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_go = PTHREAD_COND_INITIALIZER, pool_done = PTHREAD_COND_INITIALIZER;
static long pool_n, pool_gen, pool_left, pool_k, pool_size, pool_born[64], pool_hooked;
static Job pool_fn; static char *pool_parts;
#define POOL_SPIN 40000                                 /* pauses (~1 ms) a thread waits awake before it sleeps */
#define POOL_READ(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#if defined(__x86_64__) || defined(__i386__)
#define POOL_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define POOL_PAUSE() __asm__ __volatile__("yield")
#else
#define POOL_PAUSE() ((void)0)
#endif

static void *pool_worker(void *arg) {                   /* worker i runs part i of each call that has one */
    long i = (long)arg, seen;
    pthread_mutex_lock(&pool_mu);
    for (seen = pool_born[i];;) {
        if (pool_gen == seen) {                         /* the next call often comes within microseconds: a sleeping
                                                           thread takes ~40 us to wake, so spin a while first */
            pthread_mutex_unlock(&pool_mu);
            for (long s = 0; s < POOL_SPIN && POOL_READ(pool_gen) == seen; s++) POOL_PAUSE();
            pthread_mutex_lock(&pool_mu);
            while (pool_gen == seen) pthread_cond_wait(&pool_go, &pool_mu);
        }
        seen = pool_gen;
        if (i >= pool_k) continue;
        Job fn = pool_fn; void *part = pool_parts + i * pool_size;
        pthread_mutex_unlock(&pool_mu);
        fn(part);
        pthread_mutex_lock(&pool_mu);
        if (__atomic_sub_fetch(&pool_left, 1, __ATOMIC_RELEASE) == 0) pthread_cond_signal(&pool_done);
    }
    return 0;
}

static void pool_forked(void) {                         /* a forked child has none of the workers */
    pool_n = 0;
    pthread_mutex_init(&pool_mu, 0); pthread_mutex_init(&pool_busy, 0);
    pthread_cond_init(&pool_go, 0); pthread_cond_init(&pool_done, 0);
}

static void pool_run(long k, Job fn, void *parts, long size) {
    if (k < 2 || pthread_mutex_trylock(&pool_busy)) {   /* one part, or the workers busy with another caller's */
        for (long i = 0; i < k; i++) fn((char *)parts + i * size);
        return;
    }
    pthread_mutex_lock(&pool_mu);
    if (!pool_hooked) pool_hooked = !pthread_atfork(0, 0, pool_forked);
    while (pool_n < k - 1 && pool_n < 63) {
        pthread_t t;
        pool_born[pool_n + 1] = pool_gen;
        if (pthread_create(&t, 0, pool_worker, (void *)(pool_n + 1))) break;
        pthread_detach(t); pool_n++;
    }
    long m = pool_n + 1 < k ? pool_n + 1 : k;           /* parts 1..m-1 to the workers, the rest here */
    pool_fn = fn; pool_parts = parts; pool_size = size; pool_k = m; pool_left = m - 1;
    __atomic_store_n(&pool_gen, pool_gen + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool_go);
    pthread_mutex_unlock(&pool_mu);
    fn(parts);
    for (long i = m; i < k; i++) fn((char *)parts + i * size);
    for (long s = 0; s < POOL_SPIN && POOL_READ(pool_left); s++) POOL_PAUSE();
    pthread_mutex_lock(&pool_mu);
    while (pool_left) pthread_cond_wait(&pool_done, &pool_mu);
    pthread_mutex_unlock(&pool_mu);
    pthread_mutex_unlock(&pool_busy);
}
