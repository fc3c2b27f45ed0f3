// The fits behind the projector (analysis/projection.h): principal components of points and
// classical multidimensional scaling of a dissimilarity matrix, each axis signed to rise with
// position. Batched: a snapshot fits every capture site (and for MDS every prompt) in one set of
// batched operations. Coordinates in float64; PCA's large products in float32 (a few parts in a
// million).
#pragma once

#include <torch/torch.h>

#include <array>

#include "analysis/projection.h"

namespace nope {

struct AxesFit {
    torch::Tensor coords;     // (n, 3), or (B, n, 3) batched; float64; axes past the rank are 0
    torch::Tensor explained;  // (3), or (B, 3): each axis' share
    double share(int axis) const { return explained[axis].item<double>(); }
};

// x (n, D) or (B, n, D): the points' coordinates on their first three principal axes, and each
// axis' share of the total variance.
AxesFit principalAxes(const torch::Tensor& x);

// d (n, n) or (B, n, n) symmetric dissimilarities: classical (Torgerson) scaling,
// B = -1/2 J D^2 J, the points on B's top three eigenvectors scaled by the square roots of their
// eigenvalues; explained is each eigenvalue's share of the positive ones. An exact Euclidean
// distance matrix of points in three dimensions or fewer is reproduced exactly.
AxesFit classicalMds(const torch::Tensor& d);

// Flips each axis of coords (n, 3) or (B, n, 3) whose correlation with positions (n) is
// negative; returns the Pearson R of each axis with position, (3) or (B, 3).
torch::Tensor signByPosition(torch::Tensor& coords, const torch::Tensor& positions);

// Every site at once: hidden (S, P, T, D) -> one PCA fit per site over its P x T vectors, each
// prompt centred on its own mean.
std::vector<Projection> projectPca(const std::vector<CaptureSite>& sites,
                                   const torch::Tensor& hidden);
// cosines (S, P, T, T) self-cosine matrices -> one MDS fit of 1 - C per site and prompt.
std::vector<Projection> projectMds(const std::vector<CaptureSite>& sites,
                                   const torch::Tensor& cosines);

}  // namespace nope
