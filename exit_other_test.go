//go:build !linux

package main

// runExitTestRole has no role to play here: the test that needs one waits for an orphaned provider
// as a child subreaper, which only Linux offers (exit_linux_test.go).
func runExitTestRole() {}
