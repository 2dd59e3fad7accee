/*
 * Giving back the code pages that starting a VMM touched once. Loading
 * libslirp pulls in glib, libm and pcre2; relocating them, running their
 * IFUNC resolvers and constructors (and the kernel's fault-around, which maps
 * up to 16 neighbouring pages per fault) leaves ~1 MiB of their text mapped,
 * most of which a running VMM never executes again, and likewise for libc's
 * and mvm's own start-up code. The pages are the page cache's, shared with
 * every other process: unmapping them from this one frees nothing of theirs
 * and costs a minor fault for each page still in use.
 */
#ifndef MVM_TEXT_TRIM_H
#define MVM_TEXT_TRIM_H

/*
 * Unmap (MADV_DONTNEED) the executable, never-writable segments of every
 * loaded object, so only the code used from here on is resident. Objects
 * with text relocations are left alone (their text holds private changes).
 * Call once set-up is done, before the guest runs.
 */
void text_trim(void);

#endif
