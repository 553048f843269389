// The web page served at "/": one self-contained HTML file (no outside
// scripts, styles or fonts), compiled in from service/web/index.html.
#ifndef NPUZZLE_SERVICE_API_WEB_PAGE_H_
#define NPUZZLE_SERVICE_API_WEB_PAGE_H_

#include <string>

namespace npuzzle {

// The page with the catalog (jobspec/catalog.h) it builds its menus from.
std::string WebPage();

}  // namespace npuzzle

#endif  // NPUZZLE_SERVICE_API_WEB_PAGE_H_
