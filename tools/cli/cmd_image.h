/* `mvm image`: create, inspect, list and import disk images. */
#ifndef MVM_CMD_IMAGE_H
#define MVM_CMD_IMAGE_H

/* argv[0] == "image". Returns 0 ok, 1 error, 2 usage. */
int cmd_image(int argc, char **argv);
/* `mvm image import` (cmd_image_import.c), the work of the program mvm-oci;
 * argv[0] is ignored. Returns 0 ok, 1 error, 2 usage. */
int cmd_image_import(int argc, char **argv);

#endif
