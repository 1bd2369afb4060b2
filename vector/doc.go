// Package vector finds nearest neighbours among unit vectors of one space:
// Flat searches exactly (AVX2 dot products where the CPU has them, spread
// over the cores), IVF approximately (a k-means inverted file that scans the
// lists nearest the query), for spaces too large to scan whole.
//
// Scores are dot products, which for unit vectors are cosine similarities.
package vector
