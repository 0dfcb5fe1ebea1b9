// SPDX-License-Identifier: MIT
/*
 * The store thread: journal uploads (up to 256 MiB each, copied and
 * fsynced) happen here, so that the event loop never waits on them. Jobs
 * come in on a bounded queue (HMD_STORE_QUEUE_MAX, HMD_STORE_QUEUE_PER_USER
 * of them per uid) and go back on a done list; an eventfd in the event
 * loop says when. The thread touches nothing of the daemon but the store
 * (its directory fd and limits, fixed after start-up) and its jobs.
 * It blocks no signal handling: the daemon blocks the signals it handles
 * before any thread starts, so they reach only the main loop's signalfd.
 */
#include <pthread.h>
#include <sys/eventfd.h>
#include "util.h"
#include "daemon.h"

struct hmd_store_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct hmd_store_job *todo, *todo_last, *done;
	unsigned n_todo;
	int efd;
	bool stop; /* written under lock, read by the copy loop atomically */
};

static void *worker(void *arg)
{
	struct hmd_store *s = arg;
	struct hmd_store_worker *w = s->w;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct hmd_store_job *job;
		uint64_t one = 1;

		while (!w->todo && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		job = w->todo;
		w->todo = job->next;
		if (!w->todo)
			w->todo_last = NULL;
		pthread_mutex_unlock(&w->lock);

		job->err = hmd_store_put(s, job->uid, &job->req, job->fd, job->size, &w->stop,
					 job->why, sizeof(job->why));
		close(job->fd);
		job->fd = -1;

		pthread_mutex_lock(&w->lock);
		w->n_todo--;
		job->next = w->done;
		w->done = job;
		if (write(w->efd, &one, sizeof(one)) < 0) {
			/* the counter cannot overflow here; nothing to do */
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int hmd_store_worker_start(struct hmd_store *s)
{
	struct hmd_store_worker *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->efd < 0) {
		err = -errno;
		free(w);
		return err;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	s->w = w;
	err = -pthread_create(&w->thread, NULL, worker, s);
	if (err < 0) {
		close(w->efd);
		free(w);
		s->w = NULL;
	}
	return err;
}

static void free_list(struct hmd_store_job *j)
{
	while (j) {
		struct hmd_store_job *next = j->next;

		if (j->fd >= 0)
			close(j->fd);
		free(j);
		j = next;
	}
}

void hmd_store_worker_stop(struct hmd_store *s)
{
	struct hmd_store_worker *w = s->w;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	__atomic_store_n(&w->stop, true, __ATOMIC_RELAXED); /* the copy gives up at its next chunk */
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	free_list(w->todo);
	free_list(w->done);
	close(w->efd);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
	s->w = NULL;
}

int hmd_store_worker_submit(struct hmd_store *s, struct hmd_store_job *job)
{
	struct hmd_store_worker *w = s->w;
	unsigned mine = 0;

	if (!w)
		return -ENOSYS;
	pthread_mutex_lock(&w->lock);
	for (struct hmd_store_job *j = w->todo; j; j = j->next)
		mine += j->uid == job->uid;
	if (w->n_todo >= HMD_STORE_QUEUE_MAX || (job->uid != 0 && mine >= HMD_STORE_QUEUE_PER_USER)) {
		pthread_mutex_unlock(&w->lock);
		return -EBUSY;
	}
	job->next = NULL;
	if (w->todo_last)
		w->todo_last->next = job;
	else
		w->todo = job;
	w->todo_last = job;
	w->n_todo++;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

struct hmd_store_job *hmd_store_worker_done(struct hmd_store *s)
{
	struct hmd_store_worker *w = s->w;
	struct hmd_store_job *job;
	uint64_t n;

	if (!w)
		return NULL;
	if (read(w->efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing new; the list says what there is */
	}
	pthread_mutex_lock(&w->lock);
	job = w->done;
	if (job)
		w->done = job->next;
	pthread_mutex_unlock(&w->lock);
	return job;
}

int hmd_store_worker_fd(struct hmd_store *s)
{
	return s->w ? s->w->efd : -1;
}
