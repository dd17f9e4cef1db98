// The statistics' figures, like the paper's Figure 7 (SVG, no dependencies; bench's
// XmlEscape and line-plot writer): a heat map of the co-occurrence of the most frequent
// APIs, and a coverage histogram (how many catalog APIs the corpus uses how often).
#pragma once
#include <string>

#include "curriculum/catalog.h"
#include "curriculum/cooccur.h"

namespace kz::curriculum {

// The `top` most frequent APIs in both axes (ties by id), each cell a rect with class
// "cell" and data-count; colour by log(1 + count).
std::string HeatmapSvg(const Stats& s, const Catalog& catalog, size_t top = 30);

// Bars of catalog APIs per bucket of module count: 0, 1, 2-3, 4-7, 8-15, ... (each bar a
// rect with class "bar" and data-apis), titled with the share of the catalog the corpus covers.
std::string CoverageHistogramSvg(const Stats& s, const Catalog& catalog);

// The bucket of a module count: 0 -> 0, 1 -> 1, 2-3 -> 2, 4-7 -> 3, ...
size_t CoverageBucket(uint32_t count);

}  // namespace kz::curriculum
