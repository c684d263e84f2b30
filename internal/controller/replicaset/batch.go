package replicaset

import "sync"

// slowStartBatch calls fn count times in batches of 1, 2, 4, ... running
// each batch in parallel, and stops after the first batch with a failure:
// a create that fails (quota, admission) fails once or twice, not count
// times. It returns how many calls succeeded and the first error.
func slowStartBatch(count, initial int, fn func() error) (int, error) {
	remaining := count
	done := 0
	for batch := min(remaining, initial); batch > 0; batch = min(2*batch, remaining) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fn(); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		done += batch - len(errs)
		if err, failed := <-errs; failed {
			return done, err
		}
		remaining -= batch
	}
	return done, nil
}
