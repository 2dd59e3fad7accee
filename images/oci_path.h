/*
 * Names inside OCI layers and image archives, checked before anything is
 * written (pure, no I/O): a tar entry's path becomes a clean path relative
 * to the image root, or is refused; whiteouts are recognised here.
 */
#ifndef MVM_OCI_PATH_H
#define MVM_OCI_PATH_H

#include <stddef.h>

#define OCI_PATH_MAX 4096	/* a cleaned path, NUL included */
#define OCI_NAME_MAX 255	/* one component (ext4's limit) */
#define OCI_DEPTH_MAX 128	/* components in one path */

enum oci_path_kind {
	OCI_PATH_ROOT,		/* "." or "./": the image root itself */
	OCI_PATH_ENTRY,		/* an ordinary entry */
	OCI_PATH_WHITEOUT,	/* DIR/.wh.NAME: @out is DIR/NAME, to delete */
	OCI_PATH_OPAQUE,	/* DIR/.wh..wh..opq: @out is DIR ("" for the root) */
};

/*
 * Clean @in into @out (@cap bytes): leading "./" and "/./", repeated and
 * trailing slashes dropped. Refused (-EINVAL, *@why says which rule): an
 * absolute path, a ".." component, an empty name, a control character
 * (newline included: NAME.json and the ext4 ownership pass quote names),
 * a component over OCI_NAME_MAX, more than OCI_DEPTH_MAX components, or a
 * result over @cap. 0 with @out = "" for the root.
 */
int oci_path_clean(const char *in, char *out, size_t cap, const char **why);

/*
 * oci_path_clean, then the OCI image spec's whiteouts: ".wh..wh..opq" as
 * the last component makes its directory opaque; ".wh.NAME" deletes NAME;
 * any other ".wh." use (in a directory name, ".wh..wh.*" AUFS metadata, a
 * whiteout of "." or "..") is refused. 0 and *@kind, or -EINVAL with *@why.
 */
int oci_path_classify(const char *in, char *out, size_t cap, enum oci_path_kind *kind,
		      const char **why);

#endif
