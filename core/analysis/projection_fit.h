// The fits behind the projector (analysis/projection.h): principal components of points and
// classical multidimensional scaling of a dissimilarity matrix, each axis signed to rise with
// position. Coordinates in float64; PCA's large products in float32 (a few parts in a million).
#pragma once

#include <torch/torch.h>

#include <array>

#include "analysis/projection.h"

namespace nope {

struct AxesFit {
    torch::Tensor coords;  // (n, 3) float64; axes beyond the data's rank are zero
    std::array<double, kProjectionAxes> explained{};
};

// x (n, D): the n points' coordinates on their first three principal axes, and each axis' share
// of the total variance.
AxesFit principalAxes(const torch::Tensor& x);

// d (n, n) symmetric dissimilarities: classical (Torgerson) scaling, B = -1/2 J D^2 J, the points
// on B's top three eigenvectors scaled by the square roots of their eigenvalues; explained is each
// eigenvalue's share of the positive ones. An exact Euclidean distance matrix of points in three
// dimensions or fewer is reproduced exactly.
AxesFit classicalMds(const torch::Tensor& d);

// Flips each axis of coords (n, 3) whose correlation with positions (n) is negative.
void signByPosition(torch::Tensor& coords, const std::vector<double>& positions);

// hidden (P, T, D) -> one PCA fit over all P x T vectors.
Projection projectPca(CapturePoint point, int layer, const torch::Tensor& hidden);
// cosines (P, T, T) self-cosine matrices -> one MDS fit of 1 - C per prompt.
Projection projectMds(CapturePoint point, int layer, const torch::Tensor& cosines);

}  // namespace nope
