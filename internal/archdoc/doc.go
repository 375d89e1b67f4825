// Package archdoc holds the test that keeps docs/architecture.md true: every path it names in backticks
// exists, its import table is what go list finds, and every ADR in docs/adr carries a status line in the one
// format. It has no code of its own.
package archdoc
