package store

import "errors"

// ErrAmbiguous reports a short ID that several records share; the error names them.
var ErrAmbiguous = errors.New("ambiguous short ID")

// Errors of Supersede and Correct.
var (
	// ErrUnknownRecord: the ID names no stored observation.
	ErrUnknownRecord = errors.New("no such observation")
	// ErrForgotten: the ID names a forgotten record.
	ErrForgotten = errors.New("the record was forgotten")
	// ErrSelfSupersede: a record cannot replace itself.
	ErrSelfSupersede = errors.New("a record cannot supersede itself")
	// ErrSupersededReplacement: the replacement is itself superseded (name its replacement).
	ErrSupersededReplacement = errors.New("the replacement is itself superseded")
)
