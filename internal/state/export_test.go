package state

// FilePath is the path of a store made by OpenFile (tests).
func FilePath(s Store) string { return s.(*fileStore).path }
