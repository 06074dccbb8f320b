/* PPO for the LSTM policy (workbench.policy.LSTMPolicy): Net's encoder (L = 1: tanh(x W^T + b)), one LSTM layer
   (torch's gates i, f, g, o: W_ih, W_hh (4H, H), biases b_ih, b_hh (4H)), then Net's heads on its outputs. A block is
   T steps of B envs, row t * B + b; keep (T, B) is 0 where an episode begins, zeroing the state entering that step. */
#include "ppo.c"
#include "pool.h"
#include "cell.h"

typedef struct {
    const float *Wih, *Whh, *bih, *bhh; float *gWih, *gWhh, *gbih, *gbhh;
    const float *WihT, *WhhT;      /* W_ih and W_hh transposed (H, 4H), kept by the caller between updates; or NULL */
} Lstm;

/* The layer over the block from (h0, c0) (B, H). acts (T, B, 4H) holds x W_ih^T + b_ih + b_hh on entry and the gates'
   activations on exit; hprev, cprev (T, B, H) get the state entering each step (after its reset), tcs tanh(c), out
   the outputs h, cells the cell states c. whht: room for H x 4H floats. */
static void lstm_forward(const Lstm *m, long T, long B, long H, const float *h0, const float *c0, const float *keep,
                         float *acts, float *hprev, float *cprev, float *tcs, float *out, float *cells, float *whht,
                         float *pad) {
    long G = 4 * H;
    if (m->WhhT) whht = (float *)m->WhhT;
    else for (long j = 0; j < G; j++) for (long k = 0; k < H; k++) whht[k * G + j] = m->Whh[j * H + k];
    for (long t = 0; t < T; t++) {
        float *hp = hprev + t * B * H, *cp = cprev + t * B * H, *a = acts + t * B * G;
        const float *hs = t ? out + (t - 1) * B * H : h0, *cs = t ? cells + (t - 1) * B * H : c0;
        for (long b = 0; b < B; b++) {
            float k = keep[t * B + b];
            for (long j = 0; j < H; j++) { hp[b * H + j] = hs[b * H + j] * k; cp[b * H + j] = cs[b * H + j] * k; }
        }
        gemm(hp, H, 1, whht, G, a, G, B, H, G, 1, pad);         /* + h W_hh^T */
        float *tc = tcs + t * B * H, *h = out + t * B * H, *c = cells + t * B * H;
        for (long b = 0; b < B; b++) cell_forward(a + b * G, cp + b * H, c + b * H, tc + b * H, h + b * H, H);
    }
}

/* Back through the layer from dout (T, B, H), its outputs' gradient: the gates' pre-activation gradients into dG
   (T, B, 4H). dh, dc: B x H floats of scratch. */
static void lstm_backward(const Lstm *m, long T, long B, long H, const float *keep, const float *acts,
                          const float *cprev, const float *tcs, const float *dout, float *dG, float *dh, float *dc,
                          float *pad) {
    long G = 4 * H;
    memset(dh, 0, B * H * sizeof(float)); memset(dc, 0, B * H * sizeof(float));
    for (long t = T - 1; t >= 0; t--) {
        const float *a = acts + t * B * G, *cp = cprev + t * B * H, *tc = tcs + t * B * H, *dy = dout + t * B * H;
        float *d = dG + t * B * G;
        for (long j = 0; j < B * H; j++) dh[j] += dy[j];         /* the gradient reaching h: the step after's, its own */
        for (long b = 0; b < B; b++) cell_backward(a + b * G, cp + b * H, tc + b * H, dh + b * H, dc + b * H, d + b * G, H);
        gemm(d, G, 1, m->Whh, H, dh, H, B, G, H, 0, pad);        /* dh = dG W_hh, into the step before ... */
        for (long b = 0; b < B; b++) {                           /* ... through its reset */
            float k = keep[t * B + b];
            for (long j = 0; j < H; j++) { dh[b * H + j] *= k; dc[b * H + j] *= k; }
        }
    }
}

/* The rollout's step for N envs: x (N, D), the state (h, c) (N, H) -> the new state (hn, cn), then actions, their
   log-probabilities and the values as ppo_mlp_act. With threads > 1 and enough work the envs are split between
   threads. work: ppo_lstm_act_work(&net, N, threads) floats. */
typedef struct {
    const Net *n; const Lstm *m; const float *x, *h, *c, *E; void *action; float *logprob, *value, *hn, *cn, *work;
    long N;
} Act;

static long act_work(const Net *n, long N) {
    long H = n->H, G = 4 * H;
    return 4 * N * H + N * G + 3 * N * (n->A + 1) + N + G + room(N, n->D > G ? n->D : G, G, n->A); }

static void *act_part(void *arg) {
    const Act *q = arg;
    const Net *n = q->n; const Lstm *m = q->m;
    long N = q->N, H = n->H, G = 4 * H, A = n->A;
    float *e = q->work, *a = e + N * H, *head = a + N * G, *p = head + N * (A + 1), *s = p + N * (A + 1);
    float *tc = s + N * (A + 1), *hp = tc + N * H, *cp = hp + N * H, *one = cp + N * H, *bias = one + N;
    float *wt = bias + G, *pad = wt + wts(n->D > G ? n->D : G, G, A);
    for (long j = 0; j < G; j++) bias[j] = m->bih[j] + m->bhh[j];
    for (long i = 0; i < N; i++) one[i] = 1.0f;               /* no reset here: the trainer zeroes ended episodes' */
    encode(n, n->W, n->b, q->x, N, e, wt, pad);
    if (!m->WihT) dense(e, m->Wih, bias, a, wt, pad, N, H, G);
    else {                                                    /* the same without transposing W_ih again */
        for (long i = 0; i < N; i++) memcpy(a + i * G, bias, G * sizeof(float));
        gemm(e, H, 1, m->WihT, G, a, G, N, H, G, 1, pad);
    }
    lstm_forward(m, 1, N, H, q->h, q->c, one, a, hp, cp, tc, q->hn, q->cn, wt, pad);
    dense(q->hn, n->WA, n->bA, head, wt, pad, N, H, A);
    dense(q->hn, n->WC, n->bC, head + N * A, wt, pad, N, H, 1);
    sample(n, head, N, q->E, q->action, q->logprob, q->value, p, s);
    return 0;
}

static long act_threads(const Net *n, long N, long threads) {   /* split only where the products are big enough */
    long k = threads < N ? threads : N;
    return k < 1 || N * n->H * 4 * n->H < (1L << 20) ? 1 : (k > 16 ? 16 : k); }

long ppo_lstm_act_work(const Net *n, long N, long threads) {
    long k = act_threads(n, N, threads);
    return act_work(n, (N + k - 1) / k) * k; }

void ppo_lstm_act(const Net *n, const Lstm *m, const float *x, long N, const float *h, const float *c,
                  const float *E, void *action, float *logprob, float *value, float *hn, float *cn, float *work,
                  long threads) {
    long k = act_threads(n, N, threads), Nk = (N + k - 1) / k, H = n->H, A = n->A, D = n->D;
    long bytes = n->gaussian ? A * sizeof(float) : sizeof(long);   /* an env's action */
    Act parts[16];
    k = (N + Nk - 1) / Nk;                                    /* no empty part */
    for (long i = 0; i < k; i++) {
        long i0 = i * Nk, cnt = i0 + Nk < N ? Nk : N - i0;
        parts[i] = (Act){n, m, x + i0 * D, h + i0 * H, c + i0 * H, E ? E + i0 * A : 0, (char *)action + i0 * bytes,
                         logprob + i0, value + i0, hn + i0 * H, cn + i0 * H, work + i * act_work(n, Nk), cnt};
    }
    pool_run(k, act_part, parts, sizeof(Act));
}

/* A part of a block's gradient: the envs envs[0..B) of a minibatch of Mtot samples, into the gradients n and m point
   to, with its statistics' share in stats. */
typedef struct {
    const Net *n; const Lstm *m;
    const float *obs, *old_lp, *adv_all, *ret_all, *val_all, *starts, *h0_all, *c0_all, *norm;
    const void *actions; const long *envs; long T, B, N, Mtot; float clip, ent_coef, vf_coef; int clip_vloss;
    float *work, stats[5];
} Part;

static long part_work(const Net *n, long T, long B) {
    long M = T * B, H = n->H, G = 4 * H, A = n->A;
    return 2 * M + M * n->D + M + 2 * M * G + 8 * M * H + 2 * B * H + 3 * M * (A + 1) + 6 * M + G
           + room(M, n->D > G ? n->D : G, G, A); }

static void *lstm_part(void *arg) {
    Part *q = arg;
    const Net *n = q->n; const Lstm *m = q->m;
    long T = q->T, B = q->B, N = q->N, M = T * B, D = n->D, H = n->H, G = 4 * H, A = n->A;
    long *idx = (long *)q->work;                              /* 2 M floats: sample t * B + b is rollout row t * N + env */
    float *x = q->work + 2 * M, *keep = x + M * D, *acts = keep + M, *dG = acts + M * G, *e = dG + M * G;
    float *hprev = e + M * H, *cprev = hprev + M * H, *tcs = cprev + M * H, *out = tcs + M * H, *cells = out + M * H;
    float *dout = cells + M * H, *de = dout + M * H, *h0 = de + M * H, *c0 = h0 + B * H, *head = c0 + B * H;
    float *p = head + M * (A + 1), *dhead = p + M * (A + 1), *s = dhead + M * (A + 1), *bias = s + 6 * M;
    float *wt = bias + G, *pad = wt + wts(D > G ? D : G, G, A);
    for (long t = 0; t < T; t++) for (long b = 0; b < B; b++) {
        long i = t * B + b, j = t * N + q->envs[b];
        idx[i] = j; keep[i] = 1.0f - q->starts[j];
        memcpy(x + i * D, q->obs + j * D, D * sizeof(float));
    }
    for (long b = 0; b < B; b++) {
        memcpy(h0 + b * H, q->h0_all + q->envs[b] * H, H * sizeof(float));
        memcpy(c0 + b * H, q->c0_all + q->envs[b] * H, H * sizeof(float));
    }
    for (long j = 0; j < G; j++) bias[j] = m->bih[j] + m->bhh[j];
    encode(n, n->W, n->b, x, M, e, wt, pad);
    dense(e, m->Wih, bias, acts, wt, pad, M, H, G);
    lstm_forward(m, T, B, H, h0, c0, keep, acts, hprev, cprev, tcs, out, cells, wt, pad);
    dense(out, n->WA, n->bA, head, wt, pad, M, H, A);
    dense(out, n->WC, n->bC, head + M * A, wt, pad, M, H, 1);
    loss_back(n, q->actions, q->old_lp, q->adv_all, q->ret_all, q->val_all, idx, M, q->Mtot, q->clip, q->ent_coef,
              q->vf_coef, q->norm, q->clip_vloss, head, p, dhead, s, q->stats);
    float *dval = dhead + M * A;
    dense_back(out, n->WA, dhead, n->gWA, n->gbA, dout, wt, pad, M, H, A);
    dense_back(out, n->WC, dval, n->gWC, n->gbC, 0, wt, pad, M, H, 1);
    for (long i = 0; i < M; i++) {
        _Pragma("omp simd")
        for (long k = 0; k < H; k++) dout[i * H + k] += dval[i] * n->WC[k];
    }
    lstm_backward(m, T, B, H, keep, acts, cprev, tcs, dout, dG, h0, c0, pad);   /* h0, c0: scratch from here */
    dense_back(hprev, m->Whh, dG, m->gWhh, m->gbhh, 0, wt, pad, M, H, G);
    dense_back(e, m->Wih, dG, m->gWih, m->gbih, de, wt, pad, M, H, G);
    encode_back(n, n->W, n->gW, n->gb, x, e, de, dout, M, wt, pad);
    return 0;
}

/* The gradient of the PPO loss over a block of T steps of the B envs envs[0..B) of a rollout of N envs (obs (T, N,
   D), starts (T, N): 1 where an episode begins; the rest as for ppo_mlp_grad, (T, N) each), replayed from the
   state the rollout began with (h0, c0) (N, H): into the net's and the layer's gradients, its statistics into
   stats. With threads > 1 the envs are split between that many threads (each with gradients of its own, added
   up in a fixed order: the result does not depend on their timing). work: ppo_lstm_work(&net, T, B, threads). */
static long grad_size(const Net *n) {
    long D = n->D, H = n->H, G = 4 * H, A = n->A;
    return H * D + H + A * H + A + H + 1 + A + 2 * G * H + 2 * G; }

long ppo_lstm_work(const Net *n, long T, long B, long threads) {
    threads = threads < 1 ? 1 : (threads > 64 ? 64 : threads);
    long k = threads < B ? threads : B, Bk = (B + k - 1) / k;
    return part_work(n, T, Bk) * k + (k - 1) * grad_size(n) + 16; }

void ppo_lstm_grad(const Net *n, const Lstm *m, const float *obs, const void *actions, const float *old_lp,
                   const float *adv_all, const float *ret_all, const float *val_all, const float *starts,
                   const float *h0_all, const float *c0_all, const long *envs, long T, long B, long N, long threads,
                   float clip, float ent_coef, float vf_coef, int norm_adv, int clip_vloss, float *work,
                   float *stats) {
    threads = threads < 1 ? 1 : (threads > 64 ? 64 : threads);
    long k = threads < B ? threads : B, Bk = (B + k - 1) / k, size = grad_size(n), H = n->H, G = 4 * H, A = n->A;
    k = (B + Bk - 1) / Bk;                                    /* no empty part */
    float norm[2], *gl = work + part_work(n, T, Bk) * k;     /* the other threads' gradients */
    if (norm_adv) {                                           /* over the whole minibatch */
        long M = T * B, *idx = (long *)work;
        for (long t = 0; t < T; t++) for (long b = 0; b < B; b++) idx[t * B + b] = t * N + envs[b];
        adv_norm(adv_all, idx, M, norm);
    }
    Part parts[64];
    Net nets[64]; Lstm cells[64]; float *gW[64], *gb[64];
    for (long i = 0; i < k; i++) {
        long b0 = i * Bk, b1 = b0 + Bk < B ? b0 + Bk : B;
        nets[i] = *n; cells[i] = *m;
        if (i) {                                              /* gradients of its own: encoder, heads, log std, LSTM */
            float *g = gl + (i - 1) * size;
            gW[i] = g; g += H * n->D; gb[i] = g; g += H;
            nets[i].gW = &gW[i]; nets[i].gb = &gb[i];
            nets[i].gWA = g; g += A * H; nets[i].gbA = g; g += A; nets[i].gWC = g; g += H; nets[i].gbC = g; g += 1;
            nets[i].glogstd = g; g += A;
            cells[i].gWih = g; g += G * H; cells[i].gWhh = g; g += G * H; cells[i].gbih = g; g += G; cells[i].gbhh = g;
        }
        parts[i] = (Part){&nets[i], &cells[i], obs, old_lp, adv_all, ret_all, val_all, starts, h0_all, c0_all,
                          norm_adv ? norm : 0, actions, envs + b0, T, b1 - b0, N, T * B, clip, ent_coef, vf_coef,
                          clip_vloss, work + i * part_work(n, T, Bk), {0}};
    }
    pool_run(k, lstm_part, parts, sizeof(Part));
    for (long j = 0; j < 5; j++) stats[j] = parts[0].stats[j];
    for (long i = 1; i < k; i++) {                            /* in order: the sums do not depend on timing */
        const float *g = gl + (i - 1) * size;
        float *to[] = {n->gW[0], n->gb[0], n->gWA, n->gbA, n->gWC, n->gbC, n->glogstd, m->gWih, m->gWhh, m->gbih,
                       m->gbhh};
        long len[] = {H * n->D, H, A * H, A, H, 1, A, G * H, G * H, G, G};
        for (long t = 0; t < 11; g += len[t], t++) if (to[t]) for (long j = 0; j < len[t]; j++) to[t][j] += g[j];
        for (long j = 0; j < 5; j++) stats[j] += parts[i].stats[j];
    }
}
