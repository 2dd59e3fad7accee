/* `mvm image build NAME`: run images/build-NAME.sh into the image store. */
#ifndef MVM_IMAGE_BUILD_H
#define MVM_IMAGE_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct image_build {
	/* in */
	const char *name;		/* image_name_ok() */
	bool force;			/* rebuild a finished image */
	uint64_t size;			/* MVM_IMAGE_SIZE for the builder; 0: its default */
	/* out */
	char *out;			/* STORE/NAME.ext4 (malloc'd; free with image_build_free) */
	bool reused;			/* already built: nothing ran */
	double seconds;			/* the builder's wall time */
};

/*
 * Find the builder (images/build-NAME.sh beside the binary's checkout, or
 * under $MVM_IMAGE_BUILDERS), and unless NAME.ext4 and NAME.json (written
 * last: a finished build) are in the store and not @b->force, run it with
 * MVM_IMAGE_OUT, MVM_IMAGE_SIZE and MVM_GUEST_DIR; its output is ours.
 * 0, or -errno with a message in @err (empty on ENOMEM).
 */
int image_build(struct image_build *b, char *err, size_t errlen);
void image_build_free(struct image_build *b);

#endif
