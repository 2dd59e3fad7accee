/*
 * The image config's User ("name", "uid", "name:group", "uid:gid", or a
 * mix) resolved to numbers with the image's own /etc/passwd and /etc/group
 * (pure: their texts in, numbers out), as container runtimes do at start;
 * mvm does it once, at import, inside the confined unpacker.
 */
#ifndef MVM_OCI_USER_H
#define MVM_OCI_USER_H

#include <stddef.h>
#include <stdint.h>

/*
 * @passwd and @group: the files' texts (NULL when the image has none). A
 * user without a group takes its passwd entry's gid, or 0 for a number
 * passwd does not list. 0 with *@uid and *@gid; -ENOENT when a name is in
 * neither file, -EINVAL when @user is malformed; @err says which.
 */
int oci_user_resolve(const char *user, const char *passwd, const char *group, uint32_t *uid,
		     uint32_t *gid, char *err, size_t errlen);

#endif
