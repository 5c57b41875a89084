"""Is this process one of several MPI ranks? Read from the launcher's environment, so that
the answer never needs mpi4py (the plain CLI must not import it)."""
import os

# Variables through which launchers publish the world size: MPICH/Hydra and Intel MPI set
# PMI_SIZE, Open MPI sets OMPI_COMM_WORLD_SIZE, PMIx-based launchers (srun) set PMIX_SIZE.
WORLD_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")


def launched_world_size():
    """The number of ranks the launcher started (1 when not under mpiexec)."""
    for name in WORLD_SIZE_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 1


WORLD_RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def launched_rank():
    """This process's rank as the launcher published it (0 when not under mpiexec)."""
    for name in WORLD_RANK_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0
