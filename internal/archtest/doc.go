// Package archtest holds the test that keeps docs/ARCHITECTURE.md's package table true: every
// package of the module has a row, and each row's "depends on" column names exactly the
// module packages that package imports.
package archtest
