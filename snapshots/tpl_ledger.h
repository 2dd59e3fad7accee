/*
 * A template's ledger of its disk layers: which layer inodes were last read
 * against their keyed tags, and their change time then, so that a start
 * whose layers have not changed since does not read them again (issue 27's
 * benchmarks: reading them cost a template start 1.7 times the CLI's
 * instructions of the build before keyed tags, and grows with the layers).
 *
 * The layers are hard-linked into every sandbox started from the template,
 * so their change time moves with every start and `mvm rm`; an edit moves
 * it too (no user can set a change time back), and nothing else tells the
 * two apart. So a start holds each layer open under a read lease
 * (F_SETLEASE F_RDLCK: granted only while no one has the file open for
 * writing, and any later open for writing or truncation waits until the
 * lease is released) from before its check until after its own link: the
 * change time it then records can only be its own link's. The ledger, a
 * file in the state root (which no VMM reaches, like the marker of
 * tools/sandbox/sb_seal.c; never in the template's directory, which
 * someone else may be able to write), holds
 *   mvm-ledger 1 SHA256        (of the template.json bytes it goes with)
 *   NAME DEV INO CTIME_NS      (one line per layer, and one of the state
 *                               file: its SHA-256, which the seal names,
 *                               is then not taken again at each start)
 * A layer whose inode, device and change time are its line's is the one
 * read then, unchanged; any other (an edit, a link or unlink by anything
 * but a start or a removal that recorded it, another template under the
 * name, no lease on this file system) is read in full against its tag, as
 * without a ledger. A sandbox's removal unlinks its links alike, under
 * leases, and records again the layers its ledger line still matched
 * (tpl_unlink_layers). Lines are
 * written only once the layers' change times lie strictly before the
 * coarse clock's now, as the memory line of a snapshot's seal
 * (snapshots/snap_seal.h): a write in the tick of the recorded time would
 * otherwise keep it.
 */
#ifndef MVM_TPL_LEDGER_H
#define MVM_TPL_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/stat.h>

#include "snapshots/snapshot_dir.h"

#define TPL_LEDGER_MAX 8192

struct tpl_hold {
	char ledger[4096];		/* its path ("": none, every layer is read) */
	uint8_t tpl_sha256[32];		/* of the template.json the ledger goes with */
	int n;				/* layers: the snapshot's files 1..n; 0: the state */
	char name[SNAP_MAX_FILES][64];
	int fd[SNAP_MAX_FILES];		/* open under a read lease; -1: not held */
	bool same[SNAP_MAX_FILES];	/* its ledger line matches: not to be read */
	bool verified[SNAP_MAX_FILES];	/* read against its tag, or same: recorded at commit */
};

/* Nothing held (release is then a no-op); the ledger at @ledger (NULL: none). */
void tpl_hold_init(struct tpl_hold *h, const char *ledger);

/* Open and lease the layers of @in (the files 1..nfiles-1) in @dir, and
 * compare each held one with @dir's ledger for the template.json whose
 * SHA-256 is @tpl_sha256. A layer that cannot be held is simply not
 * (h->fd -1, h->same false): the caller reads it. */
void tpl_hold_layers(const char *dir, const struct snap_dir_info *in, const uint8_t tpl_sha256[32],
		     struct tpl_hold *h);

/* The same for the template's state file (slot 0 of @h; never linked, so
 * its change time stays): held, and compared with its ledger line. One
 * that matches is the state whose bytes were checked against the seal when
 * the line was written: not hashed again. */
void tpl_hold_state(const char *dir, const uint8_t tpl_sha256[32], struct tpl_hold *h);

/* Layer @i held, and @st (a link just made of it) is that very inode. */
bool tpl_hold_is(const struct tpl_hold *h, int i, const struct stat *st);

/* Record every held layer marked verified (read against its tag, or
 * matching the ledger, while held) as it is now: the ledger rewritten. Waits
 * up to 100 ms for the coarse clock to pass the layers' change times;
 * best effort (a ledger not written costs the next start a read). */
void tpl_hold_commit(struct tpl_hold *h);

/* Close the held layers (their leases go with them). */
void tpl_hold_release(struct tpl_hold *h);

#endif
