package invoicing

import (
	"context"
	"math"
	"sync"
)

// prefetched yields the list as listAll does, with up to l.cfg.prefetch
// pages in flight ahead of the one the caller ranges over.
//
// How pages are found ahead: the first page is fetched alone, because its
// total and the page size give the number of the last page; the pages after
// it are then fetched up to n at a time, never past that last page (unless
// a page's has_more says the list grew, and then one page further at a
// time). A service that sends no total gets up to n pages requested ahead
// blindly, of which those past the end come back empty and are dropped.
// Planning from the total rather than one step ahead at a time is what lets
// n requests overlap from the second page on.
//
// Pages are checked and yielded strictly in order, with the same rules as
// one page at a time (checkPage, yieldPage), and no page is requested on
// the word of a page that failed them: whatever arrives early waits its turn, so
// records come out once each and in the service's order, and an error is
// yielded after every record of the pages before it. At most n pages are in
// flight or waiting while the caller holds the current one: memory stays
// bounded by n+1 pages whatever the total. When the list ends, the caller
// breaks or the context ends, the requests still in flight are cancelled
// and waited for, so no goroutine outlives the range loop.
func (l *lister[T]) prefetched(ctx context.Context, yield func(*T, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	n := l.cfg.prefetch
	pending := make(map[int]chan pageResult[T], n) // pages in flight or done, not yet yielded
	launched := l.start                            // the highest page requested
	last := math.MaxInt                            // the last page to request
	launch := func(upTo int) {
		for launched < min(upTo, last) {
			launched++
			ch := make(chan pageResult[T], 1)
			pending[launched] = ch
			wg.Add(1)
			go func(page int) {
				defer wg.Done()
				ch <- l.fetch(ctx, page)
			}(launched)
		}
	}

	rules := pageRules{start: l.start, size: l.size}
	for page := l.start; ; page++ {
		var res pageResult[T]
		if ch, ok := pending[page]; ok {
			res = <-ch
			delete(pending, page)
		} else {
			res = l.fetch(ctx, page) // the first page, alone
		}
		l.report(&res)
		err := checkPage(&rules, page, res)
		more := false
		if err == nil {
			if pg := res.page; pg.HasMore && len(pg.Items) > 0 {
				last = math.MaxInt
				if pg.Total > 0 {
					last = max((pg.Total+l.size-1)/l.size, page+1)
				}
				launch(page + n) // before yielding: the caller's work overlaps the fetches
			}
			more, err = yieldPage(&rules, page, res.page, yield)
		}
		if err != nil {
			yield(nil, err)
		}
		if !more {
			return
		}
	}
}
