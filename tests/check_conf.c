/* placeholder: being written */
#include "config.h"
int main(void);
int main(void) { return 0; }
