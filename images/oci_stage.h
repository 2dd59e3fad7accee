/*
 * The staging tree of an OCI import: a private directory the layers are
 * applied to, and the ownership and modes the image gives its files.
 *
 * Nothing in the tree carries the image's owners or modes (files are 0600,
 * directories 0700, owned by whoever runs the import, no set-id bit ever
 * exists on the host): they are recorded here and written into the ext4
 * afterwards by debugfs (oci_stage_owner_script). Every path is reached
 * component by component with O_NOFOLLOW from the root, so a symlink a
 * layer planted (even a lower layer's, under an upper layer's write) is
 * never followed: such a write is refused.
 */
#ifndef MVM_OCI_STAGE_H
#define MVM_OCI_STAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct oci_meta {
	char *path;		/* clean, relative ("" is the root) */
	uint64_t seq;		/* later notes win */
	uint32_t uid, gid;
	uint32_t mode;		/* st_mode, type bits included; 0: forgotten */
};

struct oci_stage {
	int root;		/* the staging root, O_DIRECTORY */
	char *dir;		/* its path */
	struct oci_meta *meta;
	size_t n_meta, cap_meta;
	uint64_t stream_bytes;	/* uncompressed layer bytes read, all layers */
	uint64_t entries;	/* layer entries, all layers */
};

/* Create @dir (mode 0700, must not exist). 0 or -errno. */
int oci_stage_init(struct oci_stage *s, const char *dir);
/* Close and forget (the directory stays: the caller removes it). */
void oci_stage_free(struct oci_stage *s);

/*
 * The directory holding clean path @rel, as an O_PATH fd, with *@base its
 * last component. Missing directories on the way are made (0700) when
 * @create, else -ENOENT. A component that is a symlink or not a directory:
 * -ELOOP. @rel must not be "" (the root has no parent).
 */
int oci_stage_parent(struct oci_stage *s, const char *rel, bool create, const char **base);

/* rm -r of @rel (never following links); absent: 0. 0 or -errno. */
int oci_stage_remove(struct oci_stage *s, const char *rel);
/* Remove everything inside directory @rel ("" the root); absent: 0. */
int oci_stage_empty_dir(struct oci_stage *s, const char *rel);

/* Record the image's owner and mode for @rel (mode 0: forget it). 0 or -ENOMEM. */
int oci_stage_note(struct oci_stage *s, const char *rel, uint32_t uid, uint32_t gid, uint32_t mode);

/*
 * Walk the tree and write to @script one debugfs "set_inode_field" line per
 * field for every entry: its recorded uid, gid and mode, or root:root and
 * 0755 for a directory nothing recorded (made implicitly). *@bytes gets the
 * space the tree takes (blocks, plus an inode's worth per entry). 0 or
 * -errno.
 */
int oci_stage_owner_script(struct oci_stage *s, FILE *script, uint64_t *bytes);

#endif
