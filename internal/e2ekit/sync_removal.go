package e2ekit

// RecordsLike counts n's observations written by origin whose title contains s.
func (n *SyncNode) RecordsLike(origin, s string) int {
	n.Tb.Helper()
	db := n.Rodb()
	defer db.Close()
	return n.Count(db, "SELECT COUNT(*) FROM observations WHERE origin = ? AND instr(title, ?) > 0", origin, s)
}
