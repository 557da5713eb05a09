#ifndef PREVIEWLOOP_CFREETYPE_H
#define PREVIEWLOOP_CFREETYPE_H

// FreeType 2 from Debian's libfreetype-dev, found through pkg-config (freetype2). FreeType's public
// headers are reached through ft2build.h and the FT_FREETYPE_H macro, which Swift cannot expand in an
// import, hence this one header.
#include <ft2build.h>
#include FT_FREETYPE_H

#endif
