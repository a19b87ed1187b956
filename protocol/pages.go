package protocol

import "iter"

// Ranges compresses sorted, distinct pages into ranges of consecutive pages.
func Ranges(pages []uint32) []PageRange {
	var rs []PageRange
	for _, p := range pages {
		rs = AppendPage(rs, p)
	}
	return rs
}

// AppendPage appends page p to rs, extending its last range if p follows it.
func AppendPage(rs []PageRange, p uint32) []PageRange {
	if n := len(rs); n > 0 && rs[n-1].End() == uint64(p) {
		rs[n-1].Count++
		return rs
	}
	return append(rs, PageRange{First: p, Count: 1})
}

// Pages yields every page of the ranges in order.
func Pages(rs []PageRange) iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for _, r := range rs {
			for i := range r.Count {
				if !yield(r.First + i) {
					return
				}
			}
		}
	}
}

// PageCount is the number of pages in the ranges.
func PageCount(rs []PageRange) int {
	n := 0
	for _, r := range rs {
		n += int(r.Count)
	}
	return n
}
