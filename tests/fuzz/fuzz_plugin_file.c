/* fuzz_plugin_file.c - libFuzzer target: what the host reads of a plugin
 * file before any of its code runs (loader.c, shoal__plugin_file_check) --
 * the ELF header and size checks, the sealed private copy, the section
 * table and .note.shoal parser, the ABI check -- on arbitrary bytes written
 * to a memfd. Nothing is ever dlopen'ed. Any input must give either
 * SHOAL_OK with a sealed copy of the very bytes and a note the bytes hold
 * as a whole note (or none), or a refusal whose message names the file and
 * no copy; the same bytes said to be a byte longer than they are must be
 * refused. A crash, undefined behaviour, a leak (memory or a descriptor),
 * a note the bytes do not hold or an error without a message is a finding.
 * CI runs it for a few minutes under ASan+UBSan from the seeds in
 * corpus/fuzz_plugin_file/ (stripped plugins, whole and altered). */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PATH "/fuzz/plugins/hostile.so"
#define PREFIX PATH ": plugin refused: "

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_plugin_file: %s\n", what);
    abort();
}

/* Whether data holds, at some offset, a whole shoal note -- its header, its
 * name and all of its padded descriptor -- whose descriptor starts with
 * *note. The loader may find no note the bytes hold (a section table that
 * misses it), never one they do not. */
static int holds_note(const uint8_t *data, size_t size, const shoal_plugin_note_t *note)
{
    const size_t name_pad = (sizeof(SHOAL_NOTE_NAME) + 3) & ~(size_t)3;
    for (size_t at = 0; at + sizeof(Elf64_Nhdr) + name_pad + sizeof *note <= size; at++) {
        Elf64_Nhdr nh;
        memcpy(&nh, data + at, sizeof nh);
        if (nh.n_type != SHOAL_NOTE_TYPE || nh.n_namesz != sizeof(SHOAL_NOTE_NAME) ||
            nh.n_descsz < sizeof *note)
            continue;
        size_t desc = at + sizeof nh + name_pad;
        uint64_t end = desc + (((uint64_t)nh.n_descsz + 3) & ~(uint64_t)3);
        if (end <= size &&
            memcmp(data + at + sizeof nh, SHOAL_NOTE_NAME, sizeof(SHOAL_NOTE_NAME)) == 0 &&
            memcmp(data + desc, note, sizeof *note) == 0)
            return 1;
    }
    return 0;
}

/* The copy a load would run: sealed against any change, and the same
 * bytes. */
static void check_copy(int copy, const uint8_t *data, size_t size)
{
    const int seals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
    struct stat st;
    if (copy < 0 || fstat(copy, &st) != 0 || (size_t)st.st_size != size)
        fail("accepted without a copy of the file's size");
    if ((fcntl(copy, F_GET_SEALS) & seals) != seals)
        fail("the copy is not sealed");
    if (!(fcntl(copy, F_GETFD) & FD_CLOEXEC))
        fail("the copy is not close-on-exec");
    uint8_t *back = malloc(size ? size : 1);
    if (back == NULL || pread(copy, back, size, 0) != (ssize_t)size || memcmp(back, data, size))
        fail("the copy is not the file's bytes");
    free(back);
}

static void check_refusal(int rc, int copy, const shoal_diag_t *err)
{
    char msg[1200];
    if (rc != SHOAL_ELOAD || copy != -1)
        fail(copy != -1 ? "refused with a copy left open" : "refused with neither ELOAD nor OK");
    if (err->msg[0] == '\0' || strcmp(err->file, PATH) != 0)
        fail("a refusal without a message naming the file");
    if (strncmp(shoal__diag_format(err, msg, sizeof msg), PREFIX, strlen(PREFIX)) != 0 ||
        msg[strlen(PREFIX)] == '\0')
        fail("a refusal that does not read 'PATH: plugin refused: why'");
}

/* Whether data starts with the header of a 64-bit ELF shared object, the
 * first thing the loader asks of a file. */
static int elf_so(const uint8_t *data, size_t size)
{
    Elf64_Ehdr eh;
    if (size < sizeof eh)
        return 0;
    memcpy(&eh, data, sizeof eh);
    return memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
           eh.e_type == ET_DYN;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int first_fd = -1;
    int fd = memfd_create("fuzz_plugin_file", MFD_CLOEXEC);
    if (fd < 0)
        fail("memfd_create");
    /* Every run closes what it opened: the next memfd takes the same
     * number. A descriptor leaked on some path shows within 16 such runs. */
    if (first_fd < 0)
        first_fd = fd;
    if (fd > first_fd + 16)
        fail("descriptors leak: the input's memfd numbers keep growing");
    for (size_t done = 0; done < size;) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0)
            fail("writing the input to a memfd");
        done += (size_t)w;
    }

    shoal_plugin_note_t note;
    bool found = true;
    int copy = 0;
    shoal_diag_t err = {0};
    int rc = shoal__plugin_file_check(PATH, fd, (off_t)size, &copy, &note, &found, &err);
    if (found && !holds_note(data, size, &note))
        fail("found a note the bytes do not hold");
    if (found && !elf_so(data, size))
        fail("found a note in a file that is no 64-bit ELF shared object");
    if (rc == SHOAL_OK) {
        if (!elf_so(data, size))
            fail("accepted a file that is no 64-bit ELF shared object");
        if (found && (note.abi_major != SHOAL_ABI_MAJOR || note.abi_minor > SHOAL_ABI_MINOR ||
                      note.descriptor_size < offsetof(shoal_plugin_t, init)))
            fail("accepted a note naming an ABI this host does not speak");
        check_copy(copy, data, size);
        close(copy);
    } else {
        check_refusal(rc, copy, &err);
    }

    /* The same file said to be a byte longer (it shrank while being read):
     * refused, by its header or by the copy, and nothing left open. */
    shoal_diag_t err2 = {0};
    rc = shoal__plugin_file_check(PATH, fd, (off_t)size + 1, &copy, &note, &found, &err2);
    check_refusal(rc, copy, &err2);
    close(fd);
    return 0;
}
