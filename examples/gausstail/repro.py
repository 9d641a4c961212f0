import torch
from gausstail import log_cdf

print(log_cdf(torch.tensor([-5.0, -20.0, -40.0])))
