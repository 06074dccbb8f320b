/* PPO for the transformer policy (workbench.policy.TransformerPolicy): an embedding, L pre-norm blocks of causal
   attention over the last W steps of the episode (each layer's keys and values of the W - 1 steps before a block come
   from the state) and a feed-forward layer, a final norm, then Net's encoders (one tanh layer each for the actor and
   the critic, on the d-wide features) and heads. Rows of a block are env-major: row b * T + t. */
#include "ppo.c"
#include "pool.h"

typedef struct {
    long D, d, L, heads, W;                     /* observation size, width, layers, heads, window */
    const float *We, *be, *dist, *lnw, *lnb;    /* embedding (d, D), (d); distance bias (L, heads, W); final norm */
    const float **p;                            /* each layer's 12 tensors: ln1 w, b; qkv W (3d, d), b; out W (d, d),
                                                   b; ln2 w, b; W1 (2d, d), b1; W2 (d, 2d), b2 */
    float *gWe, *gbe, *gdist, *glnw, *glnb, **g;   /* their gradients */
} Tf;

enum { LN1W, LN1B, QKVW, QKVB, OUTW, OUTB, LN2W, LN2B, FF1W, FF1B, FF2W, FF2B };

/* Layer norm of x (M, d) (eps 1e-5, as torch's): xhat and 1 / std kept for the backward pass, y = xhat w + b. */
static void ln_forward(const float *x, const float *w, const float *b, long M, long d, float *xhat, float *rstd,
                       float *y) {
    for (long i = 0; i < M; i++) {
        const float *xi = x + i * d;
        float mean = 0.0f, var = 0.0f, r;
        for (long k = 0; k < d; k++) mean += xi[k];
        mean /= d;
        for (long k = 0; k < d; k++) var += (xi[k] - mean) * (xi[k] - mean);
        rstd[i] = r = 1.0f / sqrtf(var / d + 1e-5f);
        for (long k = 0; k < d; k++) { float z = (xi[k] - mean) * r; xhat[i * d + k] = z; y[i * d + k] = z * w[k] + b[k]; }
    }
}

/* From dy (M, d): w's and b's gradients added into gw, gb; dx (M, d) added to (acc) or written. */
static void ln_backward(const float *dy, const float *xhat, const float *rstd, const float *w, long M, long d,
                        float *gw, float *gb, float *dx, int acc) {
    for (long i = 0; i < M; i++) {
        const float *g = dy + i * d, *z = xhat + i * d;
        float m1 = 0.0f, m2 = 0.0f;
        for (long k = 0; k < d; k++) { float t = g[k] * w[k]; m1 += t; m2 += t * z[k]; gw[k] += g[k] * z[k]; gb[k] += g[k]; }
        m1 /= d; m2 /= d;
        for (long k = 0; k < d; k++) dx[i * d + k] = (acc ? dx[i * d + k] : 0.0f) + rstd[i] * (g[k] * w[k] - m1 - z[k] * m2);
    }
}

/* What a block's forward pass keeps, layer by layer (M rows): */
static long layer_size(const Tf *f, long M) { return M * (11 * f->d + 2 + f->heads * f->W); }
typedef struct { float *xh1, *r1, *a1, *qkv, *prob, *o, *xh2, *r2, *a2, *f1; } Acts;
static Acts layer_acts(const Tf *f, float *base, long M) {
    long d = f->d; Acts a; a.xh1 = base; a.r1 = a.xh1 + M * d; a.a1 = a.r1 + M; a.qkv = a.a1 + M * d; a.prob = a.qkv + 3 * M * d;
    a.o = a.prob + M * f->heads * f->W; a.xh2 = a.o + M * d; a.r2 = a.xh2 + M * d; a.a2 = a.r2 + M; a.f1 = a.a2 + M * d;
    return a; }

/* The block's attention in layer l: for row b * T + t, each head's weights over the keys 0 to W - 1 steps back (prob,
   by steps back; 0 where the key is not of this episode, or a cached step the state marks stale) and its output o.
   pk, pv, pok: the state's keys, values (N, P, d) of this layer and which cached steps count (N, P), env envs[b]'s
   rows; first (M): the last step of the block at or before t where an episode begins (-1: none). */
static void attention(const Tf *f, long l, long T, long B, const long *envs, const float *pk, const float *pv,
                      const float *pok, const long *first, const float *qkv, float *prob, float *o) {
    long d = f->d, H = f->heads, dh = d / H, W = f->W, P = W - 1;
    float scale = 1.0f / sqrtf((float)dh), s[256];
    for (long b = 0; b < B; b++) for (long t = 0; t < T; t++) {
        long row = b * T + t, e = envs[b];
        for (long h = 0; h < H; h++) {
            const float *q = qkv + row * 3 * d + h * dh;
            const float *bias = f->dist + (l * H + h) * W;
            float *pr = prob + (row * H + h) * W, mx = -INFINITY;
            for (long k = 0; k < W; k++) {
                long tau = t - k;
                if (tau >= 0 ? tau < first[row] : first[row] >= 0 || pok[e * P + P + tau] <= 0.5f) { s[k] = -INFINITY; continue; }
                const float *key = tau >= 0 ? qkv + (b * T + tau) * 3 * d + d : pk + (e * P + P + tau) * d;
                float z = 0.0f;
                for (long j = 0; j < dh; j++) z += q[j] * key[h * dh + j];
                s[k] = z * scale + bias[k];
                mx = s[k] > mx ? s[k] : mx;
            }
            float sum = 0.0f;
            for (long k = 0; k < W; k++) { pr[k] = s[k] == -INFINITY ? 0.0f : expf(s[k] - mx); sum += pr[k]; }
            float *out = o + row * d + h * dh;
            for (long j = 0; j < dh; j++) out[j] = 0.0f;
            for (long k = 0; k < W; k++) {
                pr[k] /= sum;
                if (pr[k] == 0.0f) continue;
                long tau = t - k;
                const float *val = tau >= 0 ? qkv + (b * T + tau) * 3 * d + 2 * d : pv + (e * P + P + tau) * d;
                for (long j = 0; j < dh; j++) out[j] += pr[k] * val[h * dh + j];
            }
        }
    }
}

/* Back through the attention from do (M, d): dqkv (M, 3d) (written; cached keys and values get none) and the
   distance bias's gradient added into gdist (heads, W) of this layer. */
static void attention_back(const Tf *f, long T, long B, const long *envs, const float *pk, const float *pv,
                           const float *qkv, const float *prob, const float *dout, float *dqkv, float *gdist) {
    long d = f->d, H = f->heads, dh = d / H, W = f->W, P = W - 1;
    float scale = 1.0f / sqrtf((float)dh), dp[256];
    memset(dqkv, 0, B * T * 3 * d * sizeof(float));
    for (long b = 0; b < B; b++) for (long t = 0; t < T; t++) {
        long row = b * T + t, e = envs[b];
        for (long h = 0; h < H; h++) {
            const float *pr = prob + (row * H + h) * W, *q = qkv + row * 3 * d + h * dh, *go = dout + row * d + h * dh;
            float dot = 0.0f;
            for (long k = 0; k < W; k++) {
                if (pr[k] == 0.0f) { dp[k] = 0.0f; continue; }
                long tau = t - k;
                const float *val = tau >= 0 ? qkv + (b * T + tau) * 3 * d + 2 * d : pv + (e * P + P + tau) * d;
                float z = 0.0f;
                for (long j = 0; j < dh; j++) z += go[j] * val[h * dh + j];
                dp[k] = z; dot += pr[k] * z;
            }
            float *dq = dqkv + row * 3 * d + h * dh;
            for (long k = 0; k < W; k++) {
                if (pr[k] == 0.0f) continue;
                float ds = pr[k] * (dp[k] - dot);
                long tau = t - k; gdist[h * W + k] += ds;
                const float *key = tau >= 0 ? qkv + (b * T + tau) * 3 * d + d : pk + (e * P + P + tau) * d;
                for (long j = 0; j < dh; j++) dq[j] += ds * scale * key[h * dh + j];
                if (tau < 0) continue;
                float *dk = dqkv + (b * T + tau) * 3 * d + d + h * dh, *dv = dk + d;
                for (long j = 0; j < dh; j++) { dk[j] += ds * scale * q[j]; dv[j] += pr[k] * go[j]; }
            }
        }
    }
}

/* The stack on a block's rows x (M, D) (T steps of B envs, envs[b] of the state's N), `first` as for attention:
   the final norm's output into feat (M, d); keeps layer_size floats a layer in acts, the residual stream entering each
   layer and the last in hs ((L + 1) M d), the final norm's xhat and 1 / std in xhf, rf. */
static void tf_forward(const Tf *f, const float *x, long T, long B, long N, const long *envs, const float *pk_all,
                       const float *pv_all, const float *pok, const long *first, float *acts, float *hs, float *xhf,
                       float *rf, float *feat, float *tmp, float *wt, float *pad) {
    long M = T * B, d = f->d, P = f->W - 1;
    dense(x, f->We, f->be, hs, wt, pad, M, f->D, d);
    for (long l = 0; l < f->L; l++) {
        const float **p = f->p + 12 * l;
        Acts a = layer_acts(f, acts + l * layer_size(f, M), M);
        float *h = hs + l * M * d, *hn = h + M * d;
        ln_forward(h, p[LN1W], p[LN1B], M, d, a.xh1, a.r1, a.a1);
        dense(a.a1, p[QKVW], p[QKVB], a.qkv, wt, pad, M, d, 3 * d);
        attention(f, l, T, B, envs, pk_all + l * N * P * d, pv_all + l * N * P * d, pok, first, a.qkv, a.prob, a.o);
        dense(a.o, p[OUTW], p[OUTB], hn, wt, pad, M, d, d);
        for (long j = 0; j < M * d; j++) hn[j] += h[j];
        ln_forward(hn, p[LN2W], p[LN2B], M, d, a.xh2, a.r2, a.a2);
        dense(a.a2, p[FF1W], p[FF1B], a.f1, wt, pad, M, d, 2 * d);
        for (long j = 0; j < 2 * M * d; j++) a.f1[j] = a.f1[j] > 0.0f ? a.f1[j] : 0.0f;
        dense(a.f1, p[FF2W], p[FF2B], tmp, wt, pad, M, 2 * d, d);
        for (long j = 0; j < M * d; j++) hn[j] += tmp[j];
    }
    ln_forward(hs + f->L * M * d, f->lnw, f->lnb, M, d, xhf, rf, feat);
}

/* Back from dfeat (M, d), the features' gradient, into the stack's gradients (each weight's written once; the norms'
   and the distance bias's added: the caller zeroes them). dh (M, d), dt (M, 3d), da (M, d): scratch. */
static void tf_backward(const Tf *f, const float *x, long T, long B, long N, const long *envs, const float *pk_all,
                        const float *pv_all, const float *acts, const float *xhf, const float *rf, const float *dfeat,
                        float *dh, float *dt, float *da, float *wt, float *pad) {
    long M = T * B, d = f->d, P = f->W - 1;
    ln_backward(dfeat, xhf, rf, f->lnw, M, d, f->glnw, f->glnb, dh, 0);
    for (long l = f->L - 1; l >= 0; l--) {
        const float **p = f->p + 12 * l;
        float **g = f->g + 12 * l;
        Acts a = layer_acts(f, (float *)acts + l * layer_size(f, M), M);
        /* feed-forward: h3 = h2 + W2 relu(W1 ln2(h2)) */
        dense_back(a.f1, p[FF2W], dh, g[FF2W], g[FF2B], dt, wt, pad, M, 2 * d, d);
        for (long j = 0; j < 2 * M * d; j++) if (a.f1[j] <= 0.0f) dt[j] = 0.0f;
        dense_back(a.a2, p[FF1W], dt, g[FF1W], g[FF1B], da, wt, pad, M, d, 2 * d);
        ln_backward(da, a.xh2, a.r2, p[LN2W], M, d, g[LN2W], g[LN2B], dh, 1);
        /* attention: h2 = h + Wo attn(ln1(h)) */
        dense_back(a.o, p[OUTW], dh, g[OUTW], g[OUTB], da, wt, pad, M, d, d);
        attention_back(f, T, B, envs, pk_all + l * N * P * d, pv_all + l * N * P * d, a.qkv, a.prob, da, dt,
                       f->gdist + l * f->heads * f->W);
        dense_back(a.a1, p[QKVW], dt, g[QKVW], g[QKVB], da, wt, pad, M, d, 3 * d);
        ln_backward(da, a.xh1, a.r1, p[LN1W], M, d, g[LN1W], g[LN1B], dh, 1);
    }
    dense_back(x, f->We, dh, f->gWe, f->gbe, 0, wt, pad, M, f->D, d);
}

static long tf_room(const Tf *f, long M, long A) {   /* wt and pad of dense / gemm */
    long K = 3 * f->d > f->D ? 3 * f->d : f->D, R = M > K ? M : K;
    return K * K + 16 * (R > A ? R : A) + 128; }

/* A block's (or a rollout step's) rows: T steps of B envs, envs[b] of the state's N, as one forward pass through the
   stack, the encoders and the heads; the buffers carved from work in this order (block_size floats). */
typedef struct { long *idx, *first; float *x, *acts, *hs, *xhf, *rf, *feat, *tmp, *ha, *hc, *head, *p, *dhead, *s,
                 *dz, *dv, *dh, *dt, *da, *wt, *pad; } Block;
static long block_size(const Net *n, const Tf *f, long M) {
    long d = f->d, A = n->A;
    return 4 * M + M * f->D + f->L * layer_size(f, M) + (f->L + 13) * M * d + M + 3 * M * (A + 1) + 6 * M + tf_room(f, M, A); }
static Block block(const Net *n, const Tf *f, long M, float *w) {
    long d = f->d, A = n->A, K = 3 * d > f->D ? 3 * d : f->D; Block u;
    u.idx = (long *)w; u.first = (long *)(w + 2 * M); u.x = w + 4 * M; u.acts = u.x + M * f->D;
    u.hs = u.acts + f->L * layer_size(f, M); u.xhf = u.hs + (f->L + 1) * M * d; u.rf = u.xhf + M * d;
    u.feat = u.rf + M; u.tmp = u.feat + M * d; u.ha = u.tmp + M * d; u.hc = u.ha + M * d; u.head = u.hc + M * d;
    u.p = u.head + M * (A + 1); u.dhead = u.p + M * (A + 1); u.s = u.dhead + M * (A + 1); u.dz = u.s + 6 * M;
    u.dv = u.dz + M * d; u.dh = u.dv + M * d; u.dt = u.dh + M * d; u.da = u.dt + 3 * M * d; u.wt = u.da + M * d;
    u.pad = u.wt + K * K; return u; }

/* The forward pass of the block in u (u->x, u->first filled): head outputs into u->head. */
static void block_forward(const Net *n, const Tf *f, Block *u, long T, long B, long N, const long *envs,
                          const float *pk, const float *pv, const float *pok, const float **hv) {
    tf_forward(f, u->x, T, B, N, envs, pk, pv, pok, u->first, u->acts, u->hs, u->xhf, u->rf, u->feat, u->tmp, u->wt,
               u->pad);
    forward(n, u->feat, T * B, u->ha, u->hc, u->head, hv, u->wt, u->pad);
}

/* The rollout's step for N envs: x (N, D) and the state (keys, values (L, N, P, d); which cached steps count
   (N, P)) -> actions, their log-probabilities and the values as ppo_mlp_act, and the state after the step (nk, nv,
   nok: the cache moved on by one step). With threads > 1 and enough work the envs are split between threads.
   work: ppo_tf_act_work(&net, &tf, N, threads) floats. */
typedef struct {
    const Net *n; const Tf *f; const float *x, *pk, *pv, *pok, *E; void *action; float *logprob, *value, *nk, *nv, *nok;
    long e0, cnt, N; float *work;
} TfAct;

static void *tf_act_part(void *arg) {
    const TfAct *q = arg; const Net *n = q->n; const Tf *f = q->f;
    long B = q->cnt, N = q->N, d = f->d, P = f->W - 1, D = f->D, A = n->A;
    Block u = block(n, f, B, q->work); const float *hv;
    for (long b = 0; b < B; b++) { u.idx[b] = q->e0 + b; u.first[b] = -1; }   /* resets: the trainer zeroes the state */
    memcpy(u.x, q->x + q->e0 * D, B * D * sizeof(float));
    block_forward(n, f, &u, 1, B, N, u.idx, q->pk, q->pv, q->pok, &hv);
    long bytes = n->gaussian ? A * sizeof(float) : sizeof(long);
    sample(n, u.head, B, q->E ? q->E + q->e0 * A : 0, (char *)q->action + q->e0 * bytes, q->logprob + q->e0,
           q->value + q->e0, u.p, u.s);
    for (long l = 0; l < f->L; l++) {
        const float *qkv = layer_acts(f, u.acts + l * layer_size(f, B), B).qkv;
        for (long b = 0; b < B; b++) {
            long e = q->e0 + b, at = (l * N + e) * P * d;
            for (long j = 0; j < P * d; j++) {
                q->nk[at + j] = j < (P - 1) * d ? q->pk[at + d + j] : qkv[b * 3 * d + d + j - (P - 1) * d];
                q->nv[at + j] = j < (P - 1) * d ? q->pv[at + d + j] : qkv[b * 3 * d + 2 * d + j - (P - 1) * d];
            }
        }
    }
    for (long e = q->e0; e < q->e0 + B; e++)
        for (long j = 0; j < P; j++) q->nok[e * P + j] = j + 1 < P ? q->pok[e * P + j + 1] : 1.0f;
    return 0;
}

static long tf_act_threads(const Tf *f, long N, long threads) {   /* split only where the products are big enough */
    long k = threads < N ? threads : N;
    return k < 1 || N * f->L * 12 * f->d * f->d < (1L << 21) ? 1 : (k > 16 ? 16 : k); }

long ppo_tf_act_work(const Net *n, const Tf *f, long N, long threads) {
    long k = tf_act_threads(f, N, threads);
    return block_size(n, f, (N + k - 1) / k) * k; }

void ppo_tf_act(const Net *n, const Tf *f, const float *x, long N, const float *pk, const float *pv, const float *pok,
                const float *E, void *action, float *logprob, float *value, float *nk, float *nv, float *nok,
                float *work, long threads) {
    long k = tf_act_threads(f, N, threads), Nk = (N + k - 1) / k;
    TfAct parts[16];
    k = (N + Nk - 1) / Nk;
    for (long i = 0; i < k; i++) {
        long e0 = i * Nk;
        parts[i] = (TfAct){n, f, x, pk, pv, pok, E, action, logprob, value, nk, nv, nok, e0, e0 + Nk < N ? Nk : N - e0,
                           N, work + i * block_size(n, f, Nk)};
    }
    pool_run(k, tf_act_part, parts, sizeof(TfAct));
}

/* A part of a block's gradient: the envs envs[0..B) of a minibatch of Mtot samples, into the gradients n and f point
   to (all within g (gsize floats), zeroed here first), with its statistics' share in stats. */
typedef struct {
    const Net *n; const Tf *f;
    const float *obs, *old_lp, *adv_all, *ret_all, *val_all, *starts, *pk, *pv, *pok, *norm;
    const void *actions; const long *envs; long T, B, N, Mtot; float clip, ent_coef, vf_coef; int clip_vloss;
    float *g; long gsize; float *work, stats[5];
} TfPart;

static void *tf_part(void *arg) {
    TfPart *q = arg; const Net *n = q->n; const Tf *f = q->f;
    long T = q->T, B = q->B, N = q->N, M = T * B, D = f->D, d = f->d, A = n->A;
    Block u = block(n, f, M, q->work); const float *hv;
    memset(q->g, 0, q->gsize * sizeof(float));
    for (long b = 0; b < B; b++) {
        long last = -1;
        for (long t = 0; t < T; t++) {
            long i = b * T + t, j = t * N + q->envs[b];
            if (q->starts[j] > 0.5f) last = t;
            u.idx[i] = j; u.first[i] = last;
            memcpy(u.x + i * D, q->obs + j * D, D * sizeof(float));
        }
    }
    block_forward(n, f, &u, T, B, N, q->envs, q->pk, q->pv, q->pok, &hv);
    loss_back(n, q->actions, q->old_lp, q->adv_all, q->ret_all, q->val_all, u.idx, M, q->Mtot, q->clip, q->ent_coef,
              q->vf_coef, q->norm, q->clip_vloss, u.head, u.p, u.dhead, u.s, q->stats);
    /* back through the heads and the encoders (a tanh layer each) to the features */
    float *dval = u.dhead + M * A;
    dense_back(u.ha, n->WA, u.dhead, n->gWA, n->gbA, u.dz, u.wt, u.pad, M, d, A);
    dense_back(u.hc, n->WC, dval, n->gWC, n->gbC, 0, u.wt, u.pad, M, d, 1);
    for (long i = 0; i < M; i++) for (long k = 0; k < d; k++) {
        float a = u.ha[i * d + k], c = u.hc[i * d + k];
        u.dz[i * d + k] *= 1.0f - a * a; u.dv[i * d + k] = dval[i] * n->WC[k] * (1.0f - c * c);
    }
    dense_back(u.feat, n->W[0], u.dz, n->gW[0], n->gb[0], u.tmp, u.wt, u.pad, M, d, d);
    dense_back(u.feat, n->Wv[0], u.dv, n->gWv[0], n->gbv[0], u.dz, u.wt, u.pad, M, d, d);
    for (long j = 0; j < M * d; j++) u.tmp[j] += u.dz[j];
    tf_backward(f, u.x, T, B, N, q->envs, q->pk, q->pv, u.acts, u.xhf, u.rf, u.tmp, u.dh, u.dt, u.da, u.wt, u.pad);
    return 0;
}

/* The gradient of the PPO loss over a block of T steps of the B envs envs[0..B) of a rollout of N envs (obs (T, N,
   D), starts (T, N): 1 where an episode begins; the rest as for ppo_mlp_grad, (T, N) each), replayed from the state
   the rollout began with (pk, pv (L, N, P, d), pok (N, P)): into the gradients, all of which lie in g (gsize floats),
   its statistics into stats. With threads > 1 the envs are split between that many threads, each with gradients of
   its own (the same layout), added up in a fixed order. work: ppo_tf_work(&net, &tf, T, B, threads, gsize). */
long ppo_tf_work(const Net *n, const Tf *f, long T, long B, long threads, long gsize) {
    threads = threads < 1 ? 1 : (threads > 64 ? 64 : threads);
    long k = threads < B ? threads : B, Bk = (B + k - 1) / k;
    return block_size(n, f, T * Bk) * k + (k - 1) * gsize + 16; }

#define MOVE(p) ((p) ? base + ((p) - q->g) : 0)
void ppo_tf_grad(const Net *n, const Tf *f, const float *obs, const void *actions, const float *old_lp,
                 const float *adv_all, const float *ret_all, const float *val_all, const float *starts, const float *pk,
                 const float *pv, const float *pok, const long *envs, long T, long B, long N, long threads, float clip,
                 float ent_coef, float vf_coef, int norm_adv, int clip_vloss, float *g, long gsize, float *work,
                 float *stats) {
    threads = threads < 1 ? 1 : (threads > 64 ? 64 : threads);
    long k = threads < B ? threads : B, Bk = (B + k - 1) / k;
    k = (B + Bk - 1) / Bk;                                    /* no empty part */
    float norm[2], *gl = work + block_size(n, f, T * Bk) * k;  /* the other threads' gradients */
    if (norm_adv) {                                           /* over the whole minibatch */
        long M = T * B, *idx = (long *)work;
        for (long t = 0; t < T; t++) for (long b = 0; b < B; b++) idx[t * B + b] = t * N + envs[b];
        adv_norm(adv_all, idx, M, norm);
    }
    static __thread TfPart parts[64]; static __thread Net nets[64]; static __thread Tf tfs[64];
    static __thread float *ptr[64][4 + 12 * 16];
    for (long i = 0; i < k; i++) {
        long b0 = i * Bk, b1 = b0 + Bk < B ? b0 + Bk : B;
        TfPart *q = &parts[i];
        *q = (TfPart){&nets[i], &tfs[i], obs, old_lp, adv_all, ret_all, val_all, starts, pk, pv, pok, norm_adv ? norm : 0,
                      actions, envs + b0, T, b1 - b0, N, T * B, clip, ent_coef, vf_coef, clip_vloss, g, gsize,
                      work + i * block_size(n, f, T * Bk), {0}};
        nets[i] = *n; tfs[i] = *f;
        if (i) {                                              /* the same gradients, moved into a buffer of its own */
            float *base = gl + (i - 1) * gsize, **pt = ptr[i];
            Net *m = &nets[i]; Tf *t = &tfs[i];
            pt[0] = MOVE(n->gW[0]); pt[1] = MOVE(n->gb[0]); pt[2] = MOVE(n->gWv[0]); pt[3] = MOVE(n->gbv[0]);
            m->gW = &pt[0]; m->gb = &pt[1]; m->gWv = &pt[2]; m->gbv = &pt[3]; m->glogstd = MOVE(n->glogstd);
            m->gWA = MOVE(n->gWA); m->gbA = MOVE(n->gbA); m->gWC = MOVE(n->gWC); m->gbC = MOVE(n->gbC);
            t->gWe = MOVE(f->gWe); t->gbe = MOVE(f->gbe); t->gdist = MOVE(f->gdist); t->glnw = MOVE(f->glnw);
            t->glnb = MOVE(f->glnb); t->g = &pt[4];
            for (long j = 0; j < 12 * f->L; j++) pt[4 + j] = MOVE(f->g[j]);
            q->g = base;                                      /* last: MOVE reads the caller's */
        }
    }
    pool_run(k, tf_part, parts, sizeof(TfPart));
    for (long j = 0; j < 5; j++) stats[j] = parts[0].stats[j];
    for (long i = 1; i < k; i++) {                            /* in order: the sums do not depend on timing */
        const float *gi = gl + (i - 1) * gsize;
        for (long j = 0; j < gsize; j++) g[j] += gi[j];
        for (long j = 0; j < 5; j++) stats[j] += parts[i].stats[j];
    }
}
#undef MOVE
