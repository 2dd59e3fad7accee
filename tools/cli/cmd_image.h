/* `mvm image`: create, inspect and list disk images. */
#ifndef MVM_CMD_IMAGE_H
#define MVM_CMD_IMAGE_H

/* argv[0] == "image". Returns 0 ok, 1 error, 2 usage. */
int cmd_image(int argc, char **argv);

#endif
