/* PPO for a tanh MLP actor-critic with a categorical head, on a CPU in float32 (row-major; torch's layouts):
   the rollout's step, the minibatch's loss and gradient, gradient clipping and Adam, and GAE. */
#ifndef WB_PPO_C   /* ppo_lstm.c and ppo_tf.c include it: each library is one translation unit */
#define WB_PPO_C
#include "common.h"

/* A tile of C = A B (+ C when acc): RB rows by CV vectors of VW columns, its sums in vector registers. A's element
   (i, k) is at A[i * ar + k * ak]; B and C are row-major with row strides ldb and ldc. VW is the target's vector width
   in floats: a vector wider than the registers (gcc emulates it) spills, and ran the whole kernel 5-7x slower on an
   AVX2 build (measured: a 512 x 64 x 64 product 80x). Each sum still adds its K products in order, at any VW. */
#if defined(__AVX512F__)
#define VW 16
#elif defined(__AVX__)
#define VW 8
#else
#define VW 4
#endif
typedef float vec __attribute__((vector_size(4 * VW), aligned(4)));   /* VW floats, loaded from any float address */
#define TILE(RB, CV)                                                                                          \
static inline void tile_##RB##_##CV(const float *restrict A, long ar, long ak, const float *restrict B, long ldb,  \
                                    float *restrict C, long ldc, long K, int acc) {                           \
    vec s[RB][CV];                                                                                            \
    for (int r = 0; r < RB; r++) for (int c = 0; c < CV; c++)                                                 \
        s[r][c] = acc ? *(const vec *)(C + r * ldc + VW * c) : (vec){0};                                      \
    for (long k = 0; k < K; k++) {                                                                            \
        vec b[CV];                                                                                            \
        for (int c = 0; c < CV; c++) b[c] = *(const vec *)(B + k * ldb + VW * c);                             \
        for (int r = 0; r < RB; r++) {                                                                        \
            float a = A[r * ar + k * ak];                                                                     \
            for (int c = 0; c < CV; c++) s[r][c] += a * b[c];                                                 \
        }                                                                                                     \
    }                                                                                                         \
    for (int r = 0; r < RB; r++) for (int c = 0; c < CV; c++) *(vec *)(C + r * ldc + VW * c) = s[r][c];      \
}
TILE(8, 2) TILE(8, 1) TILE(4, 1) TILE(1, 1)

/* C (M, N) = A B (+ C when acc) as above. The last N % VW columns go through the same tiles from a copy of B's
   columns padded with zeros to VW (pad: room for 16 K + 128 floats). */
static void gemm(const float *A, long ar, long ak, const float *B, long ldb, float *C, long ldc,
                 long M, long K, long N, int acc, float *pad) {
    long nv = N / VW * VW, i = 0, w = N - nv;
    float *bp = pad, *cp = pad + VW * K;
    if (w) for (long k = 0; k < K; k++) for (long c = 0; c < VW; c++) bp[k * VW + c] = c < w ? B[k * ldb + nv + c] : 0.0f;
    for (; i < M;) {
        long rows = M - i >= 8 ? 8 : (M - i >= 4 ? 4 : 1);
        const float *a = A + i * ar; float *c = C + i * ldc; long n = 0;
        if (rows == 8) {
            for (; n + 2 * VW <= N; n += 2 * VW) tile_8_2(a, ar, ak, B + n, ldb, c + n, ldc, K, acc);
            for (; n + VW <= N; n += VW) tile_8_1(a, ar, ak, B + n, ldb, c + n, ldc, K, acc);
            if (w) tile_8_1(a, ar, ak, bp, VW, cp, VW, K, 0);
        } else if (rows == 4) {
            for (; n + VW <= N; n += VW) tile_4_1(a, ar, ak, B + n, ldb, c + n, ldc, K, acc);
            if (w) tile_4_1(a, ar, ak, bp, VW, cp, VW, K, 0);
        } else {
            for (; n + VW <= N; n += VW) tile_1_1(a, ar, ak, B + n, ldb, c + n, ldc, K, acc);
            if (w) tile_1_1(a, ar, ak, bp, VW, cp, VW, K, 0);
        }
        if (w) for (long r = 0; r < rows; r++) for (long j = 0; j < w; j++)
            c[r * ldc + nv + j] = (acc ? c[r * ldc + nv + j] : 0.0f) + cp[r * VW + j];
        i += rows;
    }
}

/* y (M, N) = x (M, K) W^T + b with W (N, K); wt: room for K x N floats. */
static void dense(const float *restrict x, const float *restrict W, const float *restrict b, float *restrict y,
                  float *restrict wt, float *pad, long M, long K, long N) {
    if (N < 16) {                                          /* a head: N dot products of length K a row */
        for (long i = 0; i < M; i++)
            for (long n = 0; n < N; n++) {
                float s = 0.0f;
                _Pragma("omp simd reduction(+:s)")
                for (long k = 0; k < K; k++) s += x[i * K + k] * W[n * K + k];
                y[i * N + n] = s + b[n];
            }
        return;
    }
    for (long n = 0; n < N; n++) for (long k = 0; k < K; k++) wt[k * N + n] = W[n * K + k];
    for (long i = 0; i < M; i++) memcpy(y + i * N, b, N * sizeof(float));
    gemm(x, K, 1, wt, N, y, N, M, K, N, 1, pad);
}

/* From dy (M, N), the gradient of y = x W^T + b: gW (N, K) = dy^T x and gb = column sums (both overwritten);
   dx (M, K) = dy W unless dx is NULL. wt: room for K x N floats. */
static void dense_back(const float *restrict x, const float *restrict W, const float *restrict dy, float *restrict gW,
                       float *restrict gb, float *restrict dx, float *restrict wt, float *pad, long M, long K, long N) {
    for (long n = 0; n < N; n++) gb[n] = 0.0f;
    for (long i = 0; i < M; i++) for (long n = 0; n < N; n++) gb[n] += dy[i * N + n];
    if (K < 16 && N >= 16) {                               /* narrow input: gW^T = x^T dy, then transposed */
        gemm(x, 1, K, dy, N, wt, N, K, M, N, 0, pad);
        for (long n = 0; n < N; n++) for (long k = 0; k < K; k++) gW[n * K + k] = wt[k * N + n];
    } else gemm(dy, 1, N, x, K, gW, K, N, M, K, 0, pad);
    if (dx) gemm(dy, N, 1, W, K, dx, K, M, N, K, 0, pad);
}

/* The network: torch's tensors, by address. The critic has its own encoder (Wv, bv) or shares the actor's (NULL);
   the actor's head gives A logits of a categorical, or A means of a Gaussian with a state-independent log std. */
typedef struct {
    long D, H, L, A, gaussian;                      /* observation size, width, layers, actions, Gaussian head? */
    const float **W, **b, **Wv, **bv;              /* encoders: W[0] (H, D), then (H, H); biases (H) */
    const float *WA, *bA, *WC, *bC, *logstd;       /* actor head (A, H), critic head (1, H), log std (A) */
    float **gW, **gb, **gWv, **gbv, *gWA, *gbA, *gWC, *gbC, *glogstd;   /* their gradients */
} Net;

static const float LOG_SQRT_2PI = 0.918938533f;

/* L layers of tanh(x W^T + b) on x (M, D), each layer's output kept in acts (L, M, H); returns the last. */
static const float *encode(const Net *n, const float **W, const float **b, const float *x, long M, float *acts,
                           float *wt, float *pad) {
    const float *in = x;
    for (long l = 0, K = n->D; l < n->L; l++, K = n->H) {
        float *y = acts + l * M * n->H;
        dense(in, W[l], b[l], y, wt, pad, M, K, n->H);
        _Pragma("omp simd")
        for (long j = 0; j < M * n->H; j++) y[j] = tanhf(y[j]);
        in = y;
    }
    return in;
}

/* The encoder(s) on x (M, D), then the actor's head (M, A) and the critic's values (M) into head (M (A + 1)).
   actsv: the critic encoder's layers (unused when it shares). Returns the actor's features; *hv the critic's. */
static const float *forward(const Net *n, const float *x, long M, float *acts, float *actsv, float *head,
                            const float **hv, float *wt, float *pad) {
    long H = n->H, A = n->A;
    const float *h = encode(n, n->W, n->b, x, M, acts, wt, pad);
    *hv = n->Wv ? encode(n, n->Wv, n->bv, x, M, actsv, wt, pad) : h;
    dense(h, n->WA, n->bA, head, wt, pad, M, H, A);
    dense(*hv, n->WC, n->bC, head + M * A, wt, pad, M, H, 1);
    return h;
}

/* Back through an encoder from d (M, H), the gradient of its output (overwritten; d2 the same size, scratch):
   its weights' and biases' gradients into gW, gb. */
static void encode_back(const Net *n, const float **W, float **gW, float **gb, const float *x, const float *acts,
                        float *d, float *d2, long M, float *wt, float *pad) {
    long H = n->H;
    for (long l = n->L - 1; l >= 0; l--) {
        const float *y = acts + l * M * H;
        _Pragma("omp simd")
        for (long j = 0; j < M * H; j++) d[j] *= 1.0f - y[j] * y[j];
        dense_back(l ? acts + (l - 1) * M * H : x, W[l], d, gW[l], gb[l], l ? d2 : 0, wt, pad, M, l ? H : n->D, H);
        float *t = d; d = d2; d2 = t;
    }
}

/* Rows of logits z (M, A) -> log-probabilities (in place) and probabilities p; ent (M) the entropies if not NULL.
   s: room for M floats. The exponentials run over the whole block at once (vectorised). */
static void log_softmax(float *z, float *p, float *ent, float *s, long M, long A) {
    for (long i = 0; i < M; i++) {
        float mx = z[i * A];
        for (long a = 1; a < A; a++) mx = z[i * A + a] > mx ? z[i * A + a] : mx;
        for (long a = 0; a < A; a++) z[i * A + a] -= mx;
    }
    _Pragma("omp simd")
    for (long j = 0; j < M * A; j++) p[j] = expf(z[j]);
    for (long i = 0; i < M; i++) { float t = 0.0f; for (long a = 0; a < A; a++) t += p[i * A + a]; s[i] = t; }
    for (long i = 0; i < M; i++) {
        float inv = 1.0f / s[i], lse = logf(s[i]), h = 0.0f;
        for (long a = 0; a < A; a++) { z[i * A + a] -= lse; p[i * A + a] *= inv; h -= p[i * A + a] * z[i * A + a]; }
        if (ent) ent[i] = h;
    }
}

static long wts(long D, long H, long A) { return (D > H ? D : H) * (H > A + 1 ? H : A + 1); }   /* dense's wt */
static long room(long M, long D, long H, long A) {   /* wt and pad of dense / gemm */
    long K = D > H ? D : H, R = M > K ? M : K; return wts(D, H, A) + 16 * (R > A ? R : A) + 128; }

/* The rollout's step for N observations x (N, D): actions sampled from the categorical by Gumbel-max with E (N, A)
   standard exponential noise (argmax of logp - log E), or from the Gaussian as mean + std E with E standard normal
   (the mode when E is NULL, either head); their log-probabilities and the values. Actions: int64 (N) for a
   categorical, float32 (N, A) for a Gaussian. work: ppo_mlp_act_work(&net, N) floats. */
long ppo_mlp_act_work(const Net *n, long N) {
    return 2 * n->L * N * n->H + 3 * N * (n->A + 1) + room(N, n->D, n->H, n->A); }

/* Actions from the head's outputs head (N (A + 1)) with noise E (see above), their log-probabilities and the values.
   p, s: N (A + 1) floats each. */
static void sample(const Net *n, float *head, long N, const float *E, void *action, float *logprob, float *value,
                   float *p, float *s) {
    long A = n->A;
    for (long i = 0; i < N; i++) value[i] = head[N * A + i];
    if (n->gaussian) {
        float *a = action;
        for (long i = 0; i < N; i++) {
            float lp = 0.0f;
            for (long k = 0; k < A; k++) {
                float e = E ? E[i * A + k] : 0.0f;
                a[i * A + k] = head[i * A + k] + expf(n->logstd[k]) * e;
                lp -= e * e / 2 + n->logstd[k] + LOG_SQRT_2PI;
            }
            logprob[i] = lp;
        }
        return;
    }
    long *a = action;
    log_softmax(head, p, 0, s, N, A);
    for (long i = 0; i < N; i++) {
        const float *lp = head + i * A;
        long best = 0;
        float top = E ? lp[0] - logf(E[i * A]) : lp[0];
        for (long k = 1; k < A; k++) {
            float v = E ? lp[k] - logf(E[i * A + k]) : lp[k];
            if (v > top) { top = v; best = k; }
        }
        a[i] = best; logprob[i] = lp[best];
    }
}

void ppo_mlp_act(const Net *n, const float *x, long N, const float *E, void *action, float *logprob, float *value,
                 float *work) {
    long A = n->A;
    float *acts = work, *actsv = acts + n->L * N * n->H, *head = actsv + n->L * N * n->H, *p = head + N * (A + 1);
    float *s = p + N * (A + 1), *wt = s + N * (A + 1);
    const float *hv;
    forward(n, x, N, acts, actsv, head, &hv, wt, wt + wts(n->D, n->H, A));
    sample(n, head, N, E, action, logprob, value, p, s);
}

/* CleanRL's PPO loss (clipped surrogate + vf_coef x (clipped) value loss - ent_coef x entropy; the advantages
   normalised by norm's mean and std unless it is NULL) on M of a minibatch's Mtot samples, whose head outputs are
   in head (M (A + 1): the actor's, then the values), sample i being idx[i] of the rollout (actions (.) int64 or
   (., A) float32, logprobs, advantages, returns, values (.)): its gradient with respect to the head outputs into
   dhead (M (A + 1); a Gaussian's log std's into the net's glogstd), these samples' share of its policy_loss,
   value_loss, entropy, approx_kl and clipfrac into stats. Follows torch's autograd, ties included (torch.max
   halves a tie's gradient; clamp passes it at the bounds). head's actor part is overwritten; p: M (A + 1) floats,
   s: 6 M. */
static void loss_back(const Net *n, const void *actions, const float *old_lp, const float *adv_all,
                      const float *ret_all, const float *val_all, const long *idx, long M, long Mtot, float clip,
                      float ent_coef, float vf_coef, const float *norm, int clip_vloss, float *head, float *p,
                      float *dhead, float *s, float *stats) {
    long A = n->A;
    const long *act = actions;
    const float *actf = actions;
    float *out = head, *value = head + M * A, *dval = dhead + M * A;
    float *adv = s, *ent = adv + M, *lr = ent + M, *r = lr + M, *sums = r + M;
    /* each sample's log-probability of its action (lr, for now) and entropy */
    if (n->gaussian) {              /* p: the standardised actions z = (a - mean) / std */
        float e = 0.0f;
        for (long k = 0; k < A; k++) e += n->logstd[k] + 0.5f + LOG_SQRT_2PI;
        for (long i = 0; i < M; i++) {
            float lp = 0.0f;
            for (long k = 0; k < A; k++) {
                float z = (actf[idx[i] * A + k] - out[i * A + k]) * expf(-n->logstd[k]);
                p[i * A + k] = z; lp -= z * z / 2 + n->logstd[k] + LOG_SQRT_2PI;
            }
            lr[i] = lp; ent[i] = e;
        }
    } else {
        log_softmax(out, p, ent, sums, M, A);
        for (long i = 0; i < M; i++) lr[i] = out[i * A + act[idx[i]]];
    }
    for (long i = 0; i < M; i++) adv[i] = norm ? (adv_all[idx[i]] - norm[0]) / norm[1] : adv_all[idx[i]];
    /* each sample's ratio, then the loss and its gradient with respect to the head's outputs and the value */
    for (long i = 0; i < M; i++) lr[i] -= old_lp[idx[i]];
    _Pragma("omp simd")
    for (long i = 0; i < M; i++) r[i] = expf(lr[i]);
    double pl = 0.0, vl = 0.0, en = 0.0, kl = 0.0, cf = 0.0;
    float inv = 1.0f / Mtot, ge = -ent_coef * inv;
    if (n->gaussian) for (long k = 0; k < A; k++) n->glogstd[k] = -ent_coef * M * inv;   /* the entropy's part */
    for (long i = 0; i < M; i++) {
        long j = idx[i];
        float ri = r[i], g = adv[i];
        float rc = ri < 1.0f - clip ? 1.0f - clip : (ri > 1.0f + clip ? 1.0f + clip : ri);
        float p1 = -g * ri, p2 = -g * rc;
        pl += p1 > p2 ? p1 : p2;
        float inside = (ri >= 1.0f - clip && ri <= 1.0f + clip) ? 1.0f : 0.0f;
        float dr = p1 > p2 ? -g : (p1 < p2 ? -g * inside : -0.5f * g * (1.0f + inside));
        float dl = dr * ri * inv;                                   /* d loss / d logp(a) */
        kl += (ri - 1.0f) - lr[i]; cf += fabsf(ri - 1.0f) > clip; en += ent[i];
        float nv = value[i], v0 = val_all[j], R = ret_all[j], u = nv - R, d_v;
        if (clip_vloss) {
            float d = nv - v0, dc = d < -clip ? -clip : (d > clip ? clip : d), w = v0 + dc - R;
            float win = (d >= -clip && d <= clip) ? 1.0f : 0.0f;
            vl += 0.5f * (u * u > w * w ? u * u : w * w);
            d_v = u * u > w * w ? u : (u * u < w * w ? w * win : 0.5f * (u + w * win));
        } else { vl += 0.5f * u * u; d_v = u; }
        dval[i] = vf_coef * inv * d_v;
        if (n->gaussian)            /* d logp / d mean = z / std; d logp / d log std = z^2 - 1 */
            for (long k = 0; k < A; k++) {
                float z = p[i * A + k];
                dhead[i * A + k] = dl * z * expf(-n->logstd[k]);
                n->glogstd[k] += dl * (z * z - 1.0f);
            }
        else                        /* d logp(a) / d logits = onehot(a) - p; d entropy / d logits = -p (logp + H) */
            for (long k = 0; k < A; k++) {
                float pk = p[i * A + k];
                dhead[i * A + k] = dl * ((k == act[j]) - pk) - ge * pk * (out[i * A + k] + ent[i]);
            }
    }
    stats[0] = pl * inv; stats[1] = vl * inv; stats[2] = en * inv; stats[3] = kl * inv; stats[4] = cf * inv;
}

/* The mean and the unbiased std (+ 1e-8) of the advantages of samples idx[0..M), as torch normalises them. */
static void adv_norm(const float *adv_all, const long *idx, long M, float *norm) {
    double mean = 0.0, var = 0.0;
    for (long i = 0; i < M; i++) mean += adv_all[idx[i]];
    mean /= M;
    for (long i = 0; i < M; i++) var += (adv_all[idx[i]] - mean) * (adv_all[idx[i]] - mean);
    norm[0] = (float)mean; norm[1] = (float)sqrt(var / (M - 1)) + 1e-8f; }

/* The gradient of the PPO loss above over the M samples idx[0..M) of a rollout (obs (., D), the rest as above),
   written into the net's gradients (overwritten), its statistics into stats. work: ppo_mlp_work(&net, M) floats. */
long ppo_mlp_work(const Net *n, long M) {
    long D = n->D, H = n->H, A = n->A;
    return M * D + 2 * n->L * M * H + 4 * M * H + 3 * M * (A + 1) + 6 * M + room(M, D, H, A); }

void ppo_mlp_grad(const Net *n, const float *obs, const void *actions, const float *old_lp, const float *adv_all,
                  const float *ret_all, const float *val_all, const long *idx, long M, float clip, float ent_coef,
                  float vf_coef, int norm_adv, int clip_vloss, float *work, float *stats) {
    long D = n->D, H = n->H, L = n->L, A = n->A;
    float *x = work, *acts = x + M * D, *actsv = acts + L * M * H, *dz = actsv + L * M * H, *dz2 = dz + M * H;
    float *dv = dz2 + M * H, *dv2 = dv + M * H, *head = dv2 + M * H, *p = head + M * (A + 1), *dhead = p + M * (A + 1);
    float *s = dhead + M * (A + 1), *wt = s + 6 * M, *pad = wt + wts(D, H, A);
    for (long i = 0; i < M; i++) memcpy(x + i * D, obs + idx[i] * D, D * sizeof(float));
    const float *hv, *h = forward(n, x, M, acts, actsv, head, &hv, wt, pad);
    float norm[2];
    if (norm_adv) adv_norm(adv_all, idx, M, norm);
    loss_back(n, actions, old_lp, adv_all, ret_all, val_all, idx, M, M, clip, ent_coef, vf_coef, norm_adv ? norm : 0,
              clip_vloss, head, p, dhead, s, stats);
    /* back through the heads, then the encoder(s) */
    float *dval = dhead + M * A, *dc = n->Wv ? dv : dz;   /* the critic's features' gradient: its own, or the actor's */
    dense_back(h, n->WA, dhead, n->gWA, n->gbA, dz, wt, pad, M, H, A);
    dense_back(hv, n->WC, dval, n->gWC, n->gbC, 0, wt, pad, M, H, 1);
    for (long i = 0; i < M; i++)
        for (long k = 0; k < H; k++) dc[i * H + k] = (n->Wv ? 0.0f : dc[i * H + k]) + dval[i] * n->WC[k];
    encode_back(n, n->W, n->gW, n->gb, x, acts, dz, dz2, M, wt, pad);
    if (n->Wv) encode_back(n, n->Wv, n->gWv, n->gbv, x, actsv, dv, dv2, M, wt, pad);
}

/* torch's clip_grad_norm_ (the global norm of n tensors, scaled by max_norm / (norm + 1e-6) when under 1; not when
   max_norm <= 0) and then torch's Adam step (no weight decay) with each tensor's step count, first and second
   moments. The norm goes to *norm. */
void adam_clip(long n, float **p, float **g, float **m, float **v, float **steps, const long *sizes, double lr,
               double b1, double b2, double eps, double max_norm, float *norm) {
    double sq = 0.0;
    for (long t = 0; t < n; t++) for (long j = 0; j < sizes[t]; j++) sq += (double)g[t][j] * g[t][j];
    *norm = (float)sqrt(sq);
    float coef = 1.0f;
    if (max_norm > 0) { double c = max_norm / (sqrt(sq) + 1e-6); coef = c < 1.0 ? (float)c : 1.0f; }
    for (long t = 0; t < n; t++) {
        float step = *steps[t] += 1.0f;
        float size = (float)(lr / (1.0 - pow(b1, step))), bc2 = (float)sqrt(1.0 - pow(b2, step));
        float c1 = 1.0f - (float)b1, k2 = (float)b2, c2 = 1.0f - (float)b2, e = (float)eps;
        float *restrict pt = p[t], *restrict gt = g[t], *restrict mt = m[t], *restrict vt = v[t];
        _Pragma("omp simd")
        for (long j = 0; j < sizes[t]; j++) {
            float gj = gt[j] * coef;
            gt[j] = gj;
            mt[j] += c1 * (gj - mt[j]);
            vt[j] = k2 * vt[j] + c2 * gj * gj;
            pt[j] -= size * mt[j] / (sqrtf(vt[j]) / bc2 + e);
        }
    }
}

/* Generalised advantage estimation over a (T, N) rollout, as workbench.train.loss.compute_gae: advantages and returns
   (T, N) from the rewards, values and dones (T, N) and the values after the last step (N); gl = gamma x lambda. */
void gae(const float *rew, const float *val, const float *done, const float *next_value, long T, long N, float gamma,
         float gl, float *adv, float *ret) {
    for (long n = 0; n < N; n++) {
        float last = 0.0f;
        for (long t = T - 1; t >= 0; t--) {
            long j = t * N + n;
            float next = t == T - 1 ? next_value[n] : val[j + N], live = 1.0f - done[j];
            last = rew[j] + gamma * next * live - val[j] + gl * live * last;
            adv[j] = last; ret[j] = last + val[j];
        }
    }
}
#endif
