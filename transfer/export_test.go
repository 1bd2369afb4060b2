package transfer

// PartRecords is the most records one part of a JSON Lines import holds.
const PartRecords = partRecords
