package embed

import "fmt"

// fits panics unless s holds a rows×cols matrix with row stride ld: the kernels index raw
// memory, so a wrong shape must stop here rather than read past a slice.
func fits(s []float32, rows, cols, ld int) {
	if rows < 0 || cols < 0 || ld < cols || (rows > 0 && cols > 0 && (rows-1)*ld+cols > len(s)) {
		panic(fmt.Sprintf("embed: %d×%d matrix with stride %d does not fit in %d floats", rows, cols, ld, len(s)))
	}
}
