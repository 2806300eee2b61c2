/*
 * registry: what the state file costs the agent.  The agent saves after
 * acknowledgements (every checkpointIntervalMillis when something changed)
 * and loads once at start, so this times registry_save of N entries (forced,
 * each a full generation: tmp, fsync, .bak, rename, directory fsync) and
 * registry_load of the result, and the rise in peak RSS during the load.
 *
 * usage: registry DIR [ENTRIES [SAVES]]   (defaults 10000 and 20)
 * prints: entries=N bytes=B save_cpu_ms=C save_wall_ms=W load_cpu_ms=C
 *         load_wall_ms=W load_peak_rss_kib=K  (per save/load; K is -1
 *         where /proc/self/clear_refs cannot reset the peak)
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "registry.h"
#include "util.h"

static double
cpu_ms(void)
{
	struct rusage	ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
	    (double)ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
}

static double
wall_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* VmRSS or VmHWM of this process, in KiB; -1 when unknown. */
static long
status_kib(const char *key)
{
	char	 line[256];
	FILE	*f;
	long	 v = -1;

	f = fopen("/proc/self/status", "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return v;
}

static bool
reset_peak_rss(void)
{
	int	 fd;
	bool	 ok;

	fd = open("/proc/self/clear_refs", O_WRONLY);
	if (fd < 0)
		return false;
	ok = write(fd, "5", 1) == 1;
	close(fd);
	return ok;
}

/* Entries shaped like the agent's: one flow, real-looking paths. */
static void
fill(struct registry *reg, unsigned long n)
{
	char		 p[80];
	unsigned long	 i;

	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "/var/log/app/instance-%05lu.log", i);
		registry_set(reg, "app", 2049, 5000000 + i,
		    (uint32_t)(i * 2654435761u), 512, p, i * 4096);
	}
}

int
main(int argc, char **argv)
{
	struct registry	*reg;
	struct stat	 st;
	unsigned long	 n = 10000, saves = 20, i;
	double		 c0, w0, save_c, save_w, load_c, load_w;
	long		 before = -1, peak = -1;
	char		*path;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: registry DIR [ENTRIES [SAVES]]\n");
		return 2;
	}
	if (argc > 2)
		n = strtoul(argv[2], NULL, 10);
	if (argc > 3)
		saves = strtoul(argv[3], NULL, 10);
	if (saves == 0)
		saves = 1;
	log_setup(3, false);
	path = xasprintf("%s/bench-state.json", argv[1]);
	reg = registry_new(path);
	fill(reg, n);
	c0 = cpu_ms();
	w0 = wall_ms();
	for (i = 0; i < saves; i++)
		if (registry_save(reg, true) != 0)
			return 1;
	save_c = (cpu_ms() - c0) / (double)saves;
	save_w = (wall_ms() - w0) / (double)saves;
	registry_free(reg);
	if (stat(path, &st) != 0)
		return 1;
	reg = registry_new(path);
	if (reset_peak_rss())
		before = status_kib("VmRSS:");
	c0 = cpu_ms();
	w0 = wall_ms();
	if (registry_load(reg) != 0 || registry_count(reg) != n)
		return 1;
	load_c = cpu_ms() - c0;
	load_w = wall_ms() - w0;
	if (before >= 0)
		peak = status_kib("VmHWM:") - before;
	printf("entries=%lu bytes=%jd save_cpu_ms=%.2f save_wall_ms=%.2f "
	    "load_cpu_ms=%.2f load_wall_ms=%.2f load_peak_rss_kib=%ld\n", n,
	    (intmax_t)st.st_size, save_c, save_w, load_c, load_w, peak);
	registry_free(reg);
	free(path);
	return 0;
}
