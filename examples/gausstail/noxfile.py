import torchmatrix.noxsessions

torchmatrix.noxsessions.register(__file__)
