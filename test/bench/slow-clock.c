/*
 * A clock that runs SLOW_CLOCK times slower, for one process: loaded with LD_PRELOAD by `npm run
 * bench:instructions` into the workerd it counts under valgrind, so that process's timers and intervals (the
 * gate's reports, the wallet's writes to D1) see about as many calls go by as at the bench's native pace.
 * Wall clocks and monotonic clocks read SLOW_CLOCK times slower from the moment the process starts; CPU-time
 * clocks are left alone. Written for this bench because workerd hangs under libfaketime before it prints its
 * version, even with no offset.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double slower = 1;
static struct timespec start[8];

static int slowed(clockid_t id) {
  return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW || id == CLOCK_REALTIME_COARSE ||
         id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}

__attribute__((constructor)) static void begin(void) {
  const char *factor = getenv("SLOW_CLOCK");
  if (factor) slower = atof(factor);
  if (slower < 1) slower = 1;
  for (clockid_t id = 0; id < 8; id++)
    if (slowed(id)) syscall(SYS_clock_gettime, id, &start[id]);
}

/* The real reading, by system call (the vDSO's is libc's, which this replaces). */
int clock_gettime(clockid_t id, struct timespec *ts) {
  long failed = syscall(SYS_clock_gettime, id, ts);
  if (failed || id < 0 || id >= 8 || !slowed(id) || slower == 1) return (int)failed;
  long long elapsed = (long long)(ts->tv_sec - start[id].tv_sec) * 1000000000LL + (ts->tv_nsec - start[id].tv_nsec);
  long long nanoseconds = start[id].tv_nsec + (long long)(elapsed / slower);
  ts->tv_sec = start[id].tv_sec + nanoseconds / 1000000000LL;
  ts->tv_nsec = nanoseconds % 1000000000LL;
  return 0;
}

int gettimeofday(struct timeval *tv, void *tz) {
  (void)tz;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (tv) {
    tv->tv_sec = now.tv_sec;
    tv->tv_usec = now.tv_nsec / 1000;
  }
  return 0;
}

time_t time(time_t *out) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (out) *out = now.tv_sec;
  return now.tv_sec;
}
