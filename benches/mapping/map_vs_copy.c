/* Prototype microbenchmark: one custom call's buffers copied into guest
 * memory (what cyxla does) against mapped into it (a feasibility study, not
 * a feature):
 * docs/performance.md, "Buffers mapped instead of copied: a feasibility study".
 *
 * The "guest memory" is a 4 GiB + 32 MiB PROT_NONE reservation, as
 * wasmtime makes for a linear memory. The "XLA buffers" (one operand, one
 * result of N f32) are memfd-backed and page-exclusive, as an allocator
 * preloaded into XLA could hand them out, and XLA's own view of them is a
 * MAP_SHARED mapping of the memfd. Per call:
 *
 *   copy      memcpy the operand into a region of the reservation, the
 *             kernel runs there, memcpy the result out (one thread, as
 *             cyxla's copy below 8 MiB; the 64 MiB case is that one
 *             thread's figure, cyxla shares it with helper threads).
 *   map       mmap(MAP_FIXED|MAP_SHARED) the operand's memfd read-only and
 *             the result's writable at fixed offsets in the reservation,
 *             the kernel runs (its page faults are the mapping's cost too),
 *             then the window is mapped PROT_NONE anonymous again (a
 *             memory keeps its reservation: munmap would give the hole
 *             back to the process).
 *   populate  map with MAP_POPULATE: the page tables filled by the mmap,
 *             no fault in the kernel.
 *
 * The kernel touches every page: it reads one f32 of each operand page and
 * writes one f32 of each result page (the call's overhead, not a kernel's
 * arithmetic). Before each call the operand is written by "XLA" and after
 * it the result is checked, both outside the timing.
 *
 * Each round runs every variant, in an order that rotates from round to
 * round, first with the process's one thread ("1 thread"), then with a
 * second thread spinning on another CPU that has touched the reservation
 * ("2 threads": XLA's thread pool; unmapping then interrupts that CPU to
 * flush its TLB). Medians over the rounds; TLB shootdown interrupts per
 * call from /proc/interrupts where it has them.
 *
 * Usage: map_vs_copy [--quick] [--cpu-time] [--rounds N] [--sizes MIB,MIB]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RESERVATION ((size_t)4 << 30)
#define GUARD ((size_t)32 << 20)
#define COPY_OFF ((size_t)1 << 20)   /* the copy variant's regions */
#define MAP_OFF ((size_t)2 << 30)    /* the map variants' window */
#define MAX_ROUNDS 1000

enum { COPY, MAP, POPULATE, NVARIANTS };
static const char *const NAMES[NVARIANTS] = {"copy", "map", "populate"};
enum { T_MAP, T_KERNEL, T_UNMAP, T_TOTAL, NPHASES };

static size_t page;
static char *reservation;

static void die(const char *what) {
    fprintf(stderr, "map_vs_copy: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Wall time; --cpu-time: the thread's CPU time (user and system), which
 * leaves out the time other processes of a busy machine hold its CPU. */
static clockid_t clock_id = CLOCK_MONOTONIC;

static double now_us(void) {
    struct timespec t;
    clock_gettime(clock_id, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    double *s = malloc(n * sizeof *s);
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, by_value);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

/* TLB shootdown interrupts received so far, all CPUs (x86 Linux); -1 if
 * /proc/interrupts has no such line. */
static long tlb_shootdowns(void) {
    FILE *f = fopen("/proc/interrupts", "r");
    if (!f)
        return -1;
    char line[4096];
    long total = -1;
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ')
            p++;
        if (strncmp(p, "TLB:", 4) != 0)
            continue;
        total = 0;
        p += 4;
        for (;;) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            total += v;
            p = end;
        }
    }
    fclose(f);
    return total;
}

/* One XLA buffer: a memfd and XLA's own mapping of it. */
struct buffer {
    int fd;
    float *xla;
};

static struct buffer xla_buffer(size_t bytes) {
    struct buffer b;
    b.fd = memfd_create("xla-buffer", MFD_CLOEXEC);
    if (b.fd < 0)
        die("memfd_create");
    if (ftruncate(b.fd, bytes) != 0)
        die("ftruncate");
    b.xla = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0);
    if (b.xla == MAP_FAILED)
        die("mmap xla buffer");
    memset(b.xla, 0, bytes);
    return b;
}

/* The guest's kernel: every page of the operand read, every page of the
 * result written. */
static void kernel(const float *op, float *res, size_t bytes) {
    size_t step = page / sizeof(float);
    for (size_t i = 0; i < bytes / sizeof(float); i += step)
        res[i] = op[i] + 1.0f;
}

static void map_window(struct buffer op, struct buffer res, size_t bytes, int extra) {
    char *w = reservation + MAP_OFF;
    if (mmap(w, bytes, PROT_READ, MAP_SHARED | MAP_FIXED | extra, op.fd, 0) != w)
        die("mmap operand");
    if (mmap(w + bytes, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | extra, res.fd, 0) != w + bytes)
        die("mmap result");
}

static void unmap_window(size_t bytes) {
    char *w = reservation + MAP_OFF;
    if (mmap(w, 2 * bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) != w)
        die("mmap PROT_NONE");
}

/* One call of `variant`; its phases' times in `t`. */
static void call(int variant, struct buffer op, struct buffer res, size_t bytes, double t[NPHASES]) {
    double t0 = now_us(), t1, t2, t3;
    if (variant == COPY) {
        char *gop = reservation + COPY_OFF, *gres = gop + bytes;
        memcpy(gop, op.xla, bytes);
        t1 = now_us();
        kernel((const float *)gop, (float *)gres, bytes);
        t2 = now_us();
        memcpy(res.xla, gres, bytes);
        t3 = now_us();
    } else {
        char *w = reservation + MAP_OFF;
        map_window(op, res, bytes, variant == POPULATE ? MAP_POPULATE : 0);
        t1 = now_us();
        kernel((const float *)w, (float *)(w + bytes), bytes);
        t2 = now_us();
        unmap_window(bytes);
        t3 = now_us();
    }
    t[T_MAP] = t1 - t0;
    t[T_KERNEL] = t2 - t1;
    t[T_UNMAP] = t3 - t2;
    t[T_TOTAL] = t3 - t0;
}

/* The second thread: spins on another CPU reading the reservation while
 * `spinning`, else sleeps. */
static atomic_int spinning, stop;
static int other_cpu = -1;

static void *spinner(void *arg) {
    (void)arg;
    if (other_cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(other_cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    volatile char *p = reservation + COPY_OFF;
    while (!atomic_load(&stop)) {
        if (atomic_load_explicit(&spinning, memory_order_relaxed))
            (void)*p;
        else
            usleep(200);
    }
    return NULL;
}

static void set_spinning(int on) {
    atomic_store(&spinning, on);
    usleep(2000); /* let it wake and run on its CPU */
}

int main(int argc, char **argv) {
    int rounds = 0, quick = 0;
    size_t sizes[8] = {4, 64};
    int nsizes = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--cpu-time"))
            clock_id = CLOCK_THREAD_CPUTIME_ID;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            nsizes = 0;
            for (char *s = strtok(argv[++i], ","); s && nsizes < 8; s = strtok(NULL, ","))
                sizes[nsizes++] = strtoul(s, NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [--quick] [--cpu-time] [--rounds N] [--sizes MIB,MIB]\n", argv[0]);
            return 2;
        }
    }
    page = sysconf(_SC_PAGESIZE);

    /* The first processor's model name, family and model. */
    char model[256] = "unknown";
    int family = -1, number = -1;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (line[0] == '\n')
                break;
            if (!colon)
                continue;
            if (!strncmp(line, "model name", 10)) {
                char *m = colon + 1 + (colon[1] == ' ');
                m[strcspn(m, "\n")] = 0;
                snprintf(model, sizeof model, "%s", m);
            } else if (!strncmp(line, "cpu family", 10))
                family = atoi(colon + 1);
            else if (!strncmp(line, "model\t", 6) || !strncmp(line, "model ", 6))
                number = atoi(colon + 1);
        }
        fclose(f);
    }
    double load[3] = {0};
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = -1;
        fclose(f);
    }

    /* The main thread on one CPU, the spinner on another, if there are two. */
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) {
            if (first < 0)
                first = c;
            else if (other_cpu < 0)
                other_cpu = c;
        }
    if (other_cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(first, &set);
        sched_setaffinity(0, sizeof set, &set);
    }

    reservation = mmap(NULL, RESERVATION + GUARD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reservation == MAP_FAILED)
        die("mmap reservation");
    size_t largest = 0;
    for (int s = 0; s < nsizes; s++)
        if (sizes[s] << 20 > largest)
            largest = sizes[s] << 20;
    /* The copy variant's regions stay accessible and populated, as a
     * guest's scratch region does from call to call. */
    if (mprotect(reservation + COPY_OFF, 2 * largest, PROT_READ | PROT_WRITE) != 0)
        die("mprotect");
    memset(reservation + COPY_OFF, 0, 2 * largest);

    pthread_t thread;
    pthread_create(&thread, NULL, spinner, NULL);

    printf("cpu: %s (family %d, model %d)\n", model, family, number);
    printf("cpus: %ld online, main thread on cpu %d, second thread on cpu %d\n",
           sysconf(_SC_NPROCESSORS_ONLN), first, other_cpu);
    printf("load average before: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
    printf("clock: %s\n", clock_id == CLOCK_MONOTONIC ? "wall time" : "the thread's CPU time");
    printf("page size: %zu bytes; kernel: one f32 read per operand page, one written per result page\n", page);

    struct result {
        size_t mib;
        int threads, rounds;
        double med[NVARIANTS][NPHASES];
        double tlb[NVARIANTS];
    } results[16];
    int nresults = 0;

    for (int s = 0; s < nsizes; s++) {
        size_t bytes = sizes[s] << 20;
        int n = rounds ? rounds : quick ? 3 : bytes >= (32u << 20) ? 31 : 201;
        if (n > MAX_ROUNDS)
            n = MAX_ROUNDS;
        struct buffer op = xla_buffer(bytes), res = xla_buffer(bytes);
        static double t[2][NVARIANTS][NPHASES][MAX_ROUNDS];
        long tlb[2][NVARIANTS] = {{0}};
        int have_tlb = tlb_shootdowns() >= 0;
        for (int r = -1; r < n; r++) { /* round -1 warms up */
            for (int th = 0; th < 2; th++) {
                set_spinning(th == 1 && other_cpu >= 0);
                for (int k = 0; k < NVARIANTS; k++) {
                    int v = (k + (r < 0 ? 0 : r)) % NVARIANTS;
                    /* XLA writes the operand, then the call. */
                    memset(op.xla, (r + v) & 0x3f, bytes);
                    long before = have_tlb ? tlb_shootdowns() : 0;
                    double phases[NPHASES];
                    call(v, op, res, bytes, phases);
                    long after = have_tlb ? tlb_shootdowns() : 0;
                    /* The result is in XLA's buffer. */
                    size_t step = page / sizeof(float), count = bytes / sizeof(float);
                    for (size_t i = 0; i < count; i += step)
                        if (res.xla[i] != op.xla[i] + 1.0f) {
                            fprintf(stderr, "map_vs_copy: %s: wrong result at element %zu\n", NAMES[v], i);
                            return 1;
                        }
                    if (r >= 0) {
                        for (int p = 0; p < NPHASES; p++)
                            t[th][v][p][r] = phases[p];
                        tlb[th][v] += after - before;
                    }
                }
            }
        }
        set_spinning(0);
        for (int th = 0; th < 2; th++) {
            if (th == 1 && other_cpu < 0)
                continue;
            struct result *out = &results[nresults++];
            out->mib = sizes[s];
            out->threads = th + 1;
            out->rounds = n;
            for (int v = 0; v < NVARIANTS; v++) {
                for (int p = 0; p < NPHASES; p++)
                    out->med[v][p] = median(t[th][v][p], n);
                out->tlb[v] = have_tlb ? (double)tlb[th][v] / n : -1;
            }
        }
        munmap(op.xla, bytes);
        munmap(res.xla, bytes);
        close(op.fd);
        close(res.fd);
    }
    atomic_store(&stop, 1);
    pthread_join(thread, NULL);

    printf("\nPer call, medians over the rounds (one operand and one result of the size):\n\n");
    printf("| size | threads | copy µs | map µs | map/copy | map+populate µs | populate/copy |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < nresults; i++) {
        struct result *r = &results[i];
        double c = r->med[COPY][T_TOTAL], m = r->med[MAP][T_TOTAL], p = r->med[POPULATE][T_TOTAL];
        printf("| %zu MiB | %d | %.0f | %.0f | %.2f | %.0f | %.2f |\n", r->mib, r->threads, c, m, m / c, p, p / c);
    }
    printf("\nWhere the time goes, medians in µs (copy: in, kernel, out; map: mmap, kernel with its faults, "
           "PROT_NONE again), and TLB shootdown interrupts per call:\n\n");
    printf("| size | threads | variant | in / mmap | kernel | out / unmap | total | rounds | TLB IPIs |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < nresults; i++) {
        struct result *r = &results[i];
        for (int v = 0; v < NVARIANTS; v++) {
            printf("| %zu MiB | %d | %s | %.0f | %.0f | %.0f | %.0f | %d | ", r->mib, r->threads, NAMES[v],
                   r->med[v][T_MAP], r->med[v][T_KERNEL], r->med[v][T_UNMAP], r->med[v][T_TOTAL], r->rounds);
            if (r->tlb[v] >= 0)
                printf("%.1f |\n", r->tlb[v]);
            else
                printf("n/a |\n");
        }
    }
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) == 3)
            printf("\nload average after: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
        fclose(f);
    }
    return 0;
}
