// Package exepages gives the kernel back the pages of the running executable that only
// start-up needed.
//
// A Go daemon's start-up runs the init code of every package it links and touches type
// data and pc tables all over its binary; with the large page-cache folios of recent
// kernels every touch maps up to 2 MiB of the file into the process. Those pages stay
// mapped — counted in the process's RSS and protected from reclaim as mapped executable
// pages — although the running daemon never needs most of them again. Release unmaps
// them; what the daemon still runs is read back in, a page at a time, on demand.
package exepages

// Stats says what Release did.
type Stats struct {
	Mappings int   // read-only mappings of the executable advised
	Bytes    int64 // their total size
}
