// SPDX-License-Identifier: MIT
/*
 * enroll's daemon connection across a restart of hermeticd.
 *
 * The run does not need the daemon to stay enforced: its hooks and policy
 * are pinned in the kernel (daemon/pin.c), and enroll waits on the run's
 * cgroup through its own descriptor. So when the connection closes (the
 * daemon was killed, crashed, or is being restarted or upgraded) enroll
 * neither kills the command nor stops: it says so, reconnects in the
 * background every RETRY_MS, and takes the run back (RUN_RECLAIM) from the
 * daemon that adopted it. What that daemon could not see (kernel events
 * that went with the old one) is counted and noted in the summary and the
 * journal. A daemon that is not back when the command is done is waited
 * for up to HERMETIC_RECONNECT_WAIT seconds (default 30); after that the
 * run ends without the daemon's report, with the command's exit status.
 * The requests after the command (report, audit, kernel stream, journal,
 * end) outlive a restart the same way (enroll_daemon_call).
 */
#include <poll.h>
#include <inttypes.h>
#include <sys/socket.h>
#include <time.h>
#include "util.h"
#include "enroll.h"

#define RETRY_MS 200
#define WAIT_DEFAULT_S 30

static void clock_str(uint64_t wall_ns, char *buf, size_t size)
{
	time_t t = wall_ns / 1000000000ULL;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int enroll_daemon_pollfd(struct enroll *e)
{
	return e->no_daemon || e->daemon.lost ? -1 : e->conn.sock;
}

int enroll_daemon_timeout(struct enroll *e, int timeout_ms)
{
	if (e->daemon.lost && !e->daemon.given_up && (timeout_ms < 0 || timeout_ms > RETRY_MS))
		return RETRY_MS;
	return timeout_ms;
}

/* The connection said something while no request was out: only a hang-up
 * (the daemon sends nothing unasked). */
void enroll_daemon_event(struct enroll *e, short revents)
{
	char c;

	if (!(revents & (POLLHUP | POLLERR | POLLIN)))
		return;
	if (!(revents & (POLLHUP | POLLERR)) && recv(e->conn.sock, &c, 1, MSG_PEEK | MSG_DONTWAIT) != 0)
		return;
	enroll_daemon_lost(e);
}

void enroll_daemon_lost(struct enroll *e)
{
	char when[32];

	if (e->daemon.lost || e->no_daemon)
		return;
	e->daemon.lost = true;
	e->daemon.lost_ns = wall_ns();
	e->daemon.lost_mono = hm_now_ns();
	close(e->conn.sock);
	e->conn.sock = -1;
	clock_str(e->daemon.lost_ns, when, sizeof(when));
	eng_warn("hermeticd went away at %s (connection closed); run %" PRIu64
		 " goes on, its network still refused by the kernel; reconnecting",
		 when, e->run.run_id);
}

/* One attempt to reach the new daemon and take the run back. */
static void try_reclaim(struct enroll *e)
{
	struct hm_run_ref ref = { .run_id = e->run.run_id };
	struct hm_run_reclaim rep;
	const char *msg = NULL;
	char when[32];
	ssize_t n;
	int fd = client_connect();

	if (fd < 0)
		return; /* not back yet */
	e->conn.sock = fd;
	n = client_call(&e->conn, HM_REQ_RUN_RECLAIM, &ref, sizeof(ref), -1, HM_REP_RECLAIM, &rep,
			sizeof(rep), true, NULL, &msg);
	if (n == -ECONNRESET || n == -ENOTCONN) {
		close(fd);
		e->conn.sock = -1;
		return; /* going away again, or still starting: retry */
	}
	if (n < 0) {
		/* The new daemon has no such run for us: it could not adopt it
		 * (and then killed it), so there is nothing to reconnect to. */
		eng_warn("hermeticd is back but does not have run %" PRIu64 ": %s", e->run.run_id, msg);
		close(fd);
		e->conn.sock = -1;
		e->daemon.given_up = true;
		return;
	}
	e->daemon.lost = false;
	e->daemon.restarted = true;
	e->daemon.restarted_ns = rep.restarted_ns;
	e->daemon.away_ns += hm_now_ns() - e->daemon.lost_mono;
	/* The daemon's count covers the whole run (what any daemon before it
	 * missed too): after a second restart it replaces the first. */
	e->daemon.events_lost = rep.lost;
	clock_str(rep.restarted_ns, when, sizeof(when));
	snprintf(e->daemon.note, sizeof(e->daemon.note),
		 "daemon restarted at %s, %" PRIu64 " kernel events lost", when,
		 e->daemon.events_lost);
	eng_warn("reconnected to hermeticd: %s", e->daemon.note);
}

void enroll_daemon_retry(struct enroll *e)
{
	if (!e->daemon.lost || e->daemon.given_up)
		return;
	if (hm_now_ns() - e->daemon.last_try < RETRY_MS * 1000000ULL)
		return;
	e->daemon.last_try = hm_now_ns();
	try_reclaim(e);
}

bool enroll_daemon_wait(struct enroll *e)
{
	const char *s = getenv("HERMETIC_RECONNECT_WAIT");
	uint64_t wait_s = WAIT_DEFAULT_S, deadline;
	struct pollfd p = { .fd = e->conn.sock, .events = POLLIN };

	if (e->no_daemon)
		return false;
	/* A hang-up not seen yet (the command ended at the same moment). */
	if (!e->daemon.lost && poll(&p, 1, 0) > 0)
		enroll_daemon_event(e, p.revents);
	if (!e->daemon.lost)
		return true;
	if (s && *s && hm_parse_u64(s, &wait_s) < 0) {
		eng_warn("HERMETIC_RECONNECT_WAIT is not a number of seconds: '%s'; using %d", s,
			 WAIT_DEFAULT_S);
		wait_s = WAIT_DEFAULT_S;
	}
	deadline = hm_now_ns() + wait_s * 1000000000ULL;
	/* A signal that cancels the run (signals.c) ends the wait. */
	while (e->daemon.lost && !e->daemon.given_up && hm_now_ns() < deadline) {
		e->daemon.last_try = 0;
		enroll_daemon_retry(e);
		if (e->daemon.lost && run_signals_wait(&e->sig, &e->child, -1, 0, RETRY_MS) == -ECANCELED)
			break;
	}
	if (e->daemon.lost && !e->daemon.given_up) {
		if (e->sig.cancel)
			eng_warn("run cancelled while hermeticd was away: no refusal report, audit or "
				 "kernel stream for this run; its cgroup stays refused until a hermeticd "
				 "ends it");
		else
			eng_warn("hermeticd did not come back within %" PRIu64
				 " s (HERMETIC_RECONNECT_WAIT): no refusal report, audit or kernel "
				 "stream for this run; its cgroup stays refused until a hermeticd ends "
				 "it",
				 wait_s);
		e->daemon.given_up = true;
	}
	return !e->daemon.lost;
}

void enroll_daemon_note(struct enroll *e, struct enroll_opt *ret_opt)
{
	if (!e->daemon.restarted && !e->daemon.given_up)
		return;
	if (!e->daemon.restarted) {
		char when[32];

		clock_str(e->daemon.lost_ns, when, sizeof(when));
		snprintf(e->daemon.note, sizeof(e->daemon.note),
			 "daemon went away at %s and did not come back; its kernel events are lost",
			 when);
	}
	if (ret_opt)
		*ret_opt = (struct enroll_opt){ "daemon_restart", e->daemon.note };
}

static bool conn_lost(ssize_t n)
{
	return n == -ECONNRESET || n == -ENOTCONN || n == -EPIPE;
}

/* A request once the command is done (the run's report, audit, kernel
 * stream, journal, end): a daemon that goes away while it is out is waited
 * for as one lost during the run is (enroll_daemon_wait), and asked again.
 * What a daemon keeps of a run is pinned and adopted, so the next one
 * answers the same. Three daemons lost in one request end the tries. */
ssize_t enroll_daemon_call(struct enroll *e, uint16_t type, const void *req, uint32_t len,
			   uint16_t expect, void *rep, size_t rep_size, bool exact, int *ret_fd,
			   const char **ret_msg)
{
	ssize_t n = -ENOTCONN;

	for (int tries = 0; tries < 3; tries++) {
		if ((e->daemon.lost || e->conn.sock < 0) && !enroll_daemon_wait(e))
			break;
		n = client_call(&e->conn, type, req, len, -1, expect, rep, rep_size, exact, ret_fd,
				ret_msg);
		if (!conn_lost(n))
			return n;
		enroll_daemon_lost(e);
	}
	if (ret_msg)
		*ret_msg = "hermeticd went away and did not come back";
	return n;
}

/* The journal's hand-over (client_store_journal), tried again the same way. */
int enroll_daemon_store(struct enroll *e, const struct hm_journal_store *req, int fd,
			const char **ret_msg)
{
	int r = -ENOTCONN;

	for (int tries = 0; tries < 3; tries++) {
		if ((e->daemon.lost || e->conn.sock < 0) && !enroll_daemon_wait(e))
			break;
		r = client_store_journal(&e->conn, req, fd, ret_msg);
		if (!conn_lost(r))
			return r;
		enroll_daemon_lost(e);
	}
	if (ret_msg)
		*ret_msg = "hermeticd went away and did not come back";
	return r;
}
