//go:build !unix

package database

import "os"

// canWrite reports true where the check is not implemented: the read then uses SQLite's locks, as
// it did before wouldLeaveFiles.
func canWrite(string) bool { return true }

// canRead returns why this process may not read path (nil: it may). It opens the file: closing a
// handle drops no other handle's locks here, unlike POSIX advisory locks.
func canRead(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}
