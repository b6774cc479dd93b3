"""Forecasting decomposition block: a moving average gives the trend; when the detrended series
has a strong autocorrelation at the seasonal lag it is split into a seasonal profile and a
residual, otherwise everything that is not trend is residual."""

import torch
import torch.nn.functional as F
from torch import nn


class SeasonalTrendBlock(nn.Module):
    def __init__(self, season: int = 4, kernel: int = 5, min_autocorr: float = 0.5, horizon: int = 2):
        super().__init__()
        self.season = season
        self.kernel = kernel
        self.min_autocorr = min_autocorr
        self.trend_head = nn.Linear(16, horizon)
        self.season_head = nn.Linear(season, horizon)

    def forward(self, series: torch.Tensor):
        padded = F.pad(series[None, None], (self.kernel // 2, self.kernel // 2), mode="replicate")
        trend = F.avg_pool1d(padded, self.kernel, stride=1)[0, 0]
        detrended = series - trend
        lagged, leading = detrended[self.season:], detrended[:-self.season]
        autocorr = (lagged * leading).sum() / (detrended.pow(2).sum() + 1e-8)
        if autocorr > self.min_autocorr:
            profile = detrended.reshape(-1, self.season).mean(dim=0)
            seasonal = profile.repeat(series.shape[0] // self.season)
            residual = detrended - seasonal
        else:
            profile = torch.zeros(self.season)
            seasonal = torch.zeros_like(series)
            residual = detrended
        forecast = self.trend_head(trend) + self.season_head(profile)
        return forecast, seasonal, residual


def build() -> nn.Module:
    torch.manual_seed(0)
    return SeasonalTrendBlock().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(283)
    t = torch.arange(16, dtype=torch.float32)
    seasonal = 0.1 * t + torch.tensor([1.0, -1.0, 0.5, -0.5]).repeat(4)
    noise = 0.1 * t + torch.randn(16, generator=g)
    return [(seasonal,), (noise,)]
