// SPDX-License-Identifier: MIT
/*
 * The password database's home directory. --fs isolate moves HOME into the
 * run's root, but some runtimes take the home directory from the password
 * database instead (the JVM's user.home, getent, ~user in shells that ask
 * getpwnam): they would still read and write the real one. When the CLI
 * passes HERMETIC_HOME (the run's HOME under --fs isolate), the entry of
 * the user the process runs as (its real uid) reports that directory as
 * pw_dir, from getpwuid, getpwnam and their _r forms. Other users' entries,
 * and every other field, are the database's.
 *
 * The _r forms keep their contract: the string lives in the caller's buffer
 * (the real call gets the buffer less the room for it, so a buffer that is
 * too small is still ERANGE and the caller grows it).
 */
#include <pwd.h>
#include <string.h>
#include "shim.h"

static bool ours(const struct passwd *pw)
{
	return pw && hm.home && pw->pw_uid == getuid();
}

static struct passwd *fix(struct passwd *pw)
{
	if (ours(pw))
		pw->pw_dir = (char *)hm.home;
	return pw;
}

/* The _r forms: the real call gets buf less the room for the home at its
 * end (0 bytes when buf is smaller than that: ERANGE, as for any too small
 * buffer), and the home goes into that room. */
static size_t inner_len(size_t buflen)
{
	size_t len = hm.home ? strlen(hm.home) + 1 : 0;

	return buflen >= len ? buflen - len : 0;
}

static int fix_r(int r, struct passwd *pw, char *buf, size_t buflen, struct passwd **result)
{
	size_t len;

	if (r == 0 && *result && ours(*result)) {
		len = strlen(hm.home) + 1;
		memcpy(buf + buflen - len, hm.home, len);
		pw->pw_dir = buf + buflen - len;
	}
	return r;
}

HM_EXPORT struct passwd *getpwuid(uid_t uid)
{
	hm_ready();
	return fix(hm.real.getpwuid(uid));
}

HM_EXPORT struct passwd *getpwnam(const char *name)
{
	hm_ready();
	return fix(hm.real.getpwnam(name));
}

HM_EXPORT int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t buflen,
			 struct passwd **result)
{
	hm_ready();
	return fix_r(hm.real.getpwuid_r(uid, pw, buf, inner_len(buflen), result), pw, buf, buflen,
		     result);
}

HM_EXPORT int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t buflen,
			 struct passwd **result)
{
	hm_ready();
	return fix_r(hm.real.getpwnam_r(name, pw, buf, inner_len(buflen), result), pw, buf, buflen,
		     result);
}
