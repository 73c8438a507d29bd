package store

// VectorSource is an observation that has no vector of the asked model yet.
type VectorSource struct {
	RowID int64
	ID    string
	// Text is what gets embedded: title, subtitle, facts and narrative.
	Text string
}

// VectorRow is one stored vector. Blob is little-endian float32s (embed.EncodeVector);
// Dim 0 with an empty Blob marks a row the model could not embed.
type VectorRow struct {
	RowID int64
	ID    string // the observation's ID: a row is stored only if RowID still names it
	Dim   int
	Blob  []byte
}

// VectorStats counts an embedding model's coverage of the observations.
type VectorStats struct {
	Total    int `json:"total"`    // observations
	Embedded int `json:"embedded"` // observations with a row of the model (failed ones included)
	Failed   int `json:"failed"`   // rows the model could not embed
}
