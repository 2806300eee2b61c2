/*
 * registry: what the state file costs the agent.  The agent saves after
 * acknowledgements (every checkpointIntervalMillis when something changed)
 * and loads once at start, so this times registry_save of N entries (forced,
 * each a full generation: tmp, fsync, .bak, rename, directory fsync) and
 * registry_load of the result.  What a load costs in memory is asserted
 * by check_registry and tests/e2e/memory_10k_files_under_24mib.sh.
 *
 * usage: registry DIR [ENTRIES [SAVES]]   (defaults 10000 and 20)
 * prints: entries=N bytes=B save_cpu_ms=C save_wall_ms=W load_cpu_ms=C
 *         load_wall_ms=W  (per save, and for the load)
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/log.h"
#include "base/util.h"
#include "state/registry.h"

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
mono_ms_f(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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
	w0 = mono_ms_f();
	for (i = 0; i < saves; i++)
		if (registry_save(reg, true) != 0)
			return 1;
	save_c = (cpu_ms() - c0) / (double)saves;
	save_w = (mono_ms_f() - w0) / (double)saves;
	registry_free(reg);
	if (stat(path, &st) != 0)
		return 1;
	reg = registry_new(path);
	c0 = cpu_ms();
	w0 = mono_ms_f();
	if (registry_load(reg) != 0 || registry_count(reg) != n)
		return 1;
	load_c = cpu_ms() - c0;
	load_w = mono_ms_f() - w0;
	printf("entries=%lu bytes=%jd save_cpu_ms=%.2f save_wall_ms=%.2f "
	    "load_cpu_ms=%.2f load_wall_ms=%.2f\n", n, (intmax_t)st.st_size,
	    save_c, save_w, load_c, load_w);
	registry_free(reg);
	free(path);
	return 0;
}
