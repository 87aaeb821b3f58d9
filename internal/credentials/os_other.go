//go:build !darwin && !linux

package credentials

import "errors"

// noStore is used where no OS credential store is reached without cgo or a
// new dependency yet (Windows Credential Manager is planned): keys go to
// the 0600 file.
type noStore struct{}

func platformStore(string) osStore { return noStore{} }

func (noStore) available() bool            { return false }
func (noStore) name() string               { return "no OS credential store" }
func (noStore) get(string) (string, error) { return "", errors.New("no OS credential store") }
func (noStore) set(string, string) error {
	return errors.New("no OS credential store on this platform; use credentials_store = \"file\"")
}
func (noStore) del(string) error { return nil }
