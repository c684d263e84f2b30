package interpodaffinity

import "errors"

var errNoState = errors.New("interpodaffinity: no prefilter state (PreFilter did not run)")
